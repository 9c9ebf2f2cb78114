// Suggestions under a search box, as the WAI-ARIA combobox pattern with a
// list popup asks (no build step; ES module, no imports): the search page
// and the embeddable widget both attach it to their box. The caller says
// how to fetch suggestions for a text and what choosing one does; this
// module owns the list, the keys and the ARIA state.
//
// Keys, while the list is open: ↓ and ↑ walk the options (the box shows the
// one reached; walking past either end gives back what was typed), Enter
// chooses the option reached, Escape closes the list and gives back what
// was typed, Tab closes it. Alt+↓ opens it again. With the list closed the
// keys are left to the page (the search page's arrows walk its results).
// Options are built as DOM nodes, never as HTML: a suggestion is text from
// crawled pages.

const DEBOUNCE_MS = 60;

/**
 * Attaches a suggestion list to `input`.
 * - `listbox`: an empty element (a <ul>) to hold the options, with an id;
 * - `fetch(text)`: a promise of `[{text, kind}]` for the text in the box, or
 *   of undefined when the answer no longer matters (a newer one superseded it);
 * - `choose(text)`: called with the option chosen, after the box holds it.
 * Returns `{ close() }` for the page to close the list (a search started).
 */
export function attachSuggestions(input, listbox, { fetch, choose }) {
  let options = [];
  let active = -1;
  let typed = input.value;
  let serial = 0;
  let timer;

  input.setAttribute('role', 'combobox');
  input.setAttribute('aria-autocomplete', 'list');
  input.setAttribute('aria-controls', listbox.id);
  input.setAttribute('aria-expanded', 'false');
  listbox.setAttribute('role', 'listbox');
  listbox.setAttribute('aria-label', 'Suggestions');
  listbox.hidden = true;

  function close() {
    clearTimeout(timer);
    serial++;
    active = -1;
    listbox.hidden = true;
    input.setAttribute('aria-expanded', 'false');
    input.removeAttribute('aria-activedescendant');
  }

  function open() {
    if (options.length === 0) return;
    listbox.hidden = false;
    input.setAttribute('aria-expanded', 'true');
  }

  function draw(texts) {
    options = texts;
    active = -1;
    input.removeAttribute('aria-activedescendant');
    listbox.replaceChildren(
      ...texts.map((suggestion, i) => {
        const li = listbox.ownerDocument.createElement('li');
        li.id = `${listbox.id}-${i}`;
        li.setAttribute('role', 'option');
        li.setAttribute('aria-selected', 'false');
        li.className = `suggestion ${suggestion.kind}`;
        // What was typed plainly, the completion in bold, as search boxes do.
        // Compared at the typed length: lowercasing may change a string's length ("İ").
        const common = suggestion.text.slice(0, typed.length).toLowerCase() === typed.toLowerCase() ? typed.length : 0;
        const rest = listbox.ownerDocument.createElement('b');
        rest.textContent = suggestion.text.slice(common);
        li.append(suggestion.text.slice(0, common), rest);
        // Keep the focus in the box: a click chooses without blurring it.
        li.addEventListener('mousedown', (event) => event.preventDefault());
        li.addEventListener('click', () => pick(i));
        return li;
      }),
    );
    if (texts.length === 0) close();
    else open();
  }

  function reach(i) {
    // A request still waiting for the debounce would ask for the option now in the box.
    clearTimeout(timer);
    const items = listbox.children;
    if (active >= 0) items[active]?.setAttribute('aria-selected', 'false');
    active = i;
    if (i < 0) {
      input.value = typed;
      input.removeAttribute('aria-activedescendant');
      return;
    }
    items[i].setAttribute('aria-selected', 'true');
    items[i].scrollIntoView({ block: 'nearest' });
    input.setAttribute('aria-activedescendant', items[i].id);
    input.value = options[i].text;
  }

  function pick(i) {
    const text = options[i].text;
    input.value = text;
    typed = text;
    close();
    choose(text);
  }

  async function request() {
    const mine = ++serial;
    const text = input.value;
    if (text.trim() === '') return close();
    let answer;
    try {
      answer = await fetch(text);
    } catch {
      // No suggestions is no failure of the box: searching goes on without them.
      answer = [];
    }
    if (answer === undefined || mine !== serial || input.value !== text) return;
    draw(answer.filter((s) => s.text !== text));
  }

  input.addEventListener('input', () => {
    typed = input.value;
    clearTimeout(timer);
    timer = setTimeout(request, DEBOUNCE_MS);
  });

  input.addEventListener('keydown', (event) => {
    // Keys that compose a character (an IME's candidates, Enter committing them) are the IME's.
    if (event.isComposing || event.keyCode === 229) return;
    const shown = !listbox.hidden;
    let handled = true;
    if (event.key === 'ArrowDown' && event.altKey) open();
    else if (event.key === 'ArrowDown' && shown) reach(active + 1 < options.length ? active + 1 : -1);
    else if (event.key === 'ArrowUp' && shown) reach(active < 0 ? options.length - 1 : active - 1);
    else if (event.key === 'Enter' && shown && active >= 0) pick(active);
    else if (event.key === 'Escape' && shown) {
      reach(-1);
      close();
    } else {
      handled = false;
      if (event.key === 'Tab' || event.key === 'Enter') close();
    }
    if (handled) {
      event.preventDefault();
      event.stopPropagation();
    }
  });

  input.addEventListener('blur', () => close());

  return { close };
}
