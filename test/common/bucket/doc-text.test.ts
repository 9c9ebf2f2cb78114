import assert from 'node:assert/strict';
import test from 'node:test';
import fc from 'fast-check';
import { linkBlocks, plainText, plainTextAndAnchors, readDocText, TextBuilder, WORD_TYPE, type DocTextToken, type WordType } from '../../../common/bucket/doc-text.js';
import { SherlockError } from '../../../common/errors.js';

type Op =
  | { op: 'append'; text: string }
  | { op: 'type'; type: WordType }
  | { op: 'break' }
  | { op: 'page'; n: number }
  | { op: 'open'; n: number }
  | { op: 'close' };

function build(ops: Op[], cap = 1 << 20): TextBuilder {
  const builder = new TextBuilder(cap);
  for (const op of ops) {
    if (op.op === 'append') builder.append(op.text);
    else if (op.op === 'type') builder.setType(op.type);
    else if (op.op === 'break') builder.breakBlock();
    else if (op.op === 'page') builder.breakPage(op.n);
    else if (op.op === 'open') builder.openLink(op.n);
    else builder.closeLink();
  }
  return builder;
}

const tokens = (buf: Uint8Array): DocTextToken[] => [...readDocText(buf)];

/** The tokens written back through a builder: reading what that wrote must give the same tokens. */
function rewrite(list: DocTextToken[]): Buffer {
  const builder = new TextBuilder(1 << 20);
  for (const token of list) {
    if (token.kind === 'text') {
      builder.setType(token.type);
      builder.append(token.text);
    } else if (token.kind === 'break') {
      if (token.page === undefined) builder.breakBlock();
      else builder.breakPage(token.page);
    } else if (token.kind === 'link-open') builder.openLink(token.n);
    else builder.closeLink();
  }
  return builder.finish();
}

/** What plainText must give for links-free ops: whitespace runs one space, break runs one line feed, nothing at the ends. */
function modelPlain(ops: Op[]): string {
  const joined = ops.map((op) => (op.op === 'append' ? op.text : op.op === 'break' || op.op === 'page' ? '\uE000' : '')).join('');
  return joined
    .replace(/[\s\x00-\x1f\x7f]+/g, ' ')
    .replace(/ ?(?:\uE000 ?)+/g, '\n')
    .replace(/^[ \n]+|[ \n]+$/g, '');
}

/** Reading `bytes` fails at `offset` (shifted by where the text lies, when given). */
function expectCorrupt(bytes: number[], offset: number, message: RegExp, at: { file?: string; offset?: number } = {}): void {
  assert.throws(
    () => [...readDocText(Buffer.from(bytes), at)],
    (err: unknown) => {
      assert.ok(err instanceof SherlockError, String(err));
      assert.equal(err.code, 'SHERLOCK_CORRUPT_BUCKET');
      assert.equal(err.place.offset, (at.offset ?? 0) + offset);
      assert.equal(err.place.file, at.file);
      assert.match(err.message, message);
      return true;
    },
  );
}

const hex = (buf: Buffer) => buf.toString('hex');

test('whitespace runs become one space, none at the start or end, across calls', () => {
  const builder = new TextBuilder(1000);
  builder.append('  Hello \n\t world');
  builder.append('  ');
  builder.append('\u00a0again\u0000 ');
  assert.equal(builder.finish().toString('utf8'), 'Hello world again');
});

test('word types are switched just before the words that need them, the space staying outside', () => {
  const builder = new TextBuilder(1000);
  builder.append('plain ');
  builder.setType(WORD_TYPE.emphasised);
  builder.setType(WORD_TYPE.small); // no word in between: no byte for it
  builder.append('small');
  builder.setType(WORD_TYPE.text);
  builder.append(' back');
  assert.equal(hex(builder.finish()), hex(Buffer.concat([Buffer.from('plain '), Buffer.of(0x82), Buffer.from('small '), Buffer.of(0x80), Buffer.from('back')])));
});

test('a break carries the word type, is never doubled and never begins the text', () => {
  const builder = new TextBuilder(1000);
  builder.breakBlock();
  builder.setType(WORD_TYPE.heading1);
  builder.append('Title ');
  builder.breakBlock();
  builder.breakBlock();
  builder.setType(WORD_TYPE.text);
  builder.append('  Body');
  builder.breakBlock();
  const out = builder.finish();
  assert.equal(hex(out), hex(Buffer.concat([Buffer.of(0x83), Buffer.from('Title'), Buffer.of(0x90), Buffer.from('Body')])));
  assert.deepEqual(tokens(out), [
    { kind: 'text', text: 'Title', type: WORD_TYPE.heading1 },
    { kind: 'break' },
    { kind: 'text', text: 'Body', type: WORD_TYPE.text },
  ]);
  assert.equal(plainText(out), 'Title\nBody');
});

test('link brackets take two bytes for indexes 0–1023 and the space before them stays outside', () => {
  for (const [n, first, second] of [
    [0, 0xa0, 0x80],
    [63, 0xa0, 0xbf],
    [64, 0xa1, 0x80],
    [1023, 0xaf, 0xbf],
  ] as const) {
    const builder = new TextBuilder(100);
    builder.append('see ');
    builder.openLink(n);
    builder.append('here ');
    builder.closeLink();
    builder.append('now');
    const out = builder.finish();
    assert.equal(hex(out), hex(Buffer.concat([Buffer.from('see '), Buffer.of(first, second), Buffer.from('here'), Buffer.of(0xb0), Buffer.from(' now')])));
    assert.deepEqual(tokens(out), [
      { kind: 'text', text: 'see ', type: 0 },
      { kind: 'link-open', n },
      { kind: 'text', text: 'here', type: 0 },
      { kind: 'link-close' },
      { kind: 'text', text: ' now', type: 0 },
    ]);
  }
  assert.throws(() => new TextBuilder(10).openLink(1024), RangeError);
  assert.throws(() => new TextBuilder(10).openLink(-1), RangeError);
});

test('opening a bracket closes an open one, and finish closes the last', () => {
  const builder = new TextBuilder(100);
  builder.openLink(1);
  builder.append('a');
  builder.openLink(2);
  builder.append('b');
  assert.deepEqual(tokens(builder.finish()), [
    { kind: 'link-open', n: 1 },
    { kind: 'text', text: 'a', type: 0 },
    { kind: 'link-close' },
    { kind: 'link-open', n: 2 },
    { kind: 'text', text: 'b', type: 0 },
    { kind: 'link-close' },
  ]);
});

test('the cap drops the first word that does not fit and everything after it, keeping brackets closed', () => {
  const builder = new TextBuilder(12);
  builder.append('one two three four');
  assert.equal(builder.cut, true);
  builder.append('more');
  assert.equal(builder.finish().toString(), 'one two');

  const linked = new TextBuilder(9);
  linked.openLink(0);
  linked.append('abc defgh');
  const out = linked.finish();
  assert.equal(linked.cut, true);
  assert.ok(out.length <= 9);
  assert.deepEqual(tokens(out), [{ kind: 'link-open', n: 0 }, { kind: 'text', text: 'abc', type: 0 }, { kind: 'link-close' }]);

  // A multi-byte character is never split: a word that does not fit whole is dropped.
  const wide = new TextBuilder(5);
  wide.append('žžž');
  assert.equal(wide.finish().length, 0);
  assert.equal(wide.cut, true);
});

test('the reader rejects malformed text naming the offset', () => {
  expectCorrupt([0x41, 0xa0], 1, /cut off at the end/, { file: 'b', offset: 100 });
  expectCorrupt([0x41, 0xa0, 0x41], 2, /second byte 0x41/);
  expectCorrupt([0x41, 0x42, 0xb5], 2, /undefined control byte 0xb5/);
  expectCorrupt([0x86, 0x41], 0, /undefined word type 6/);
  expectCorrupt([0x41, 0x9f], 1, /undefined word type 15/);
  expectCorrupt([0x41, 0xc0, 0x80], 1, /starts no UTF-8 character/);
  expectCorrupt([0xf5, 0x80, 0x80, 0x80], 0, /starts no UTF-8 character/);
  expectCorrupt([0xff], 0, /starts no UTF-8 character/);
  expectCorrupt([0xe0, 0x80, 0x80], 1, /continuation/); // overlong
  expectCorrupt([0xed, 0xa0, 0x80], 1, /continuation/); // surrogate
  expectCorrupt([0xf4, 0x90, 0x80, 0x80], 1, /continuation/); // above U+10FFFF
  expectCorrupt([0x41, 0xe2, 0x82], 1, /cut off at the end/);
  expectCorrupt([0xc3, 0x41], 1, /continuation/);
  expectCorrupt([0xa0, 0x80, 0xa0, 0x81], 2, /inside the bracket opened at 0/);
  expectCorrupt([0x41, 0xb0], 1, /none is open/);
  expectCorrupt([0x41, 0xa0, 0x80, 0x41], 1, /never closed/);
  expectCorrupt([0x41, 0xb1, 0x80, 0x80], 1, /page break cut off/);
  expectCorrupt([0x41, 0xb1, 0x80, 0x41, 0x80], 3, /byte 0x41 of a page break/);
  expectCorrupt([0x41, 0xb1, 0x80, 0x80, 0x81], 1, /page break to page 1/);
  expectCorrupt([0x41, 0xb2], 1, /undefined control byte 0xb2/);
});

test('a page break is written before the next word only, in place of the break, carrying its page and keeping the type', () => {
  const builder = new TextBuilder(1 << 10);
  builder.breakPage(3); // blank first pages: the text begins on page 3
  builder.setType(WORD_TYPE.heading1);
  builder.append('Title');
  builder.setType(WORD_TYPE.text);
  builder.append(' words ');
  builder.breakPage(4); // a page without words
  builder.breakPage(5);
  builder.append('more');
  builder.breakBlock();
  builder.breakPage(262143);
  builder.append('last');
  const out = builder.finish();
  assert.deepEqual([...out], [
    0xb1, 0x80, 0x80, 0x83, 0x83, ...Buffer.from('Title '), 0x80, ...Buffer.from('words'),
    0xb1, 0x80, 0x80, 0x85, ...Buffer.from('more'), 0xb1, 0xbf, 0xbf, 0xbf, ...Buffer.from('last'),
  ]);
  assert.deepEqual(tokens(out), [
    { kind: 'break', page: 3 },
    { kind: 'text', text: 'Title ', type: WORD_TYPE.heading1 },
    { kind: 'text', text: 'words', type: WORD_TYPE.text },
    { kind: 'break', page: 5 },
    { kind: 'text', text: 'more', type: WORD_TYPE.text },
    { kind: 'break', page: 262143 },
    { kind: 'text', text: 'last', type: WORD_TYPE.text },
  ]);
  assert.equal(plainText(out), 'Title words\nmore\nlast');
  assert.throws(() => builder.breakPage(1), RangeError);
});

test('the reader yields text runs with their type between the controls', () => {
  const buf = Buffer.concat([Buffer.from('Příliš '), Buffer.of(0x81), Buffer.from('žluťoučký'), Buffer.of(0x95), Buffer.from('日本語 😀')]);
  assert.deepEqual(tokens(buf), [
    { kind: 'text', text: 'Příliš ', type: WORD_TYPE.text },
    { kind: 'text', text: 'žluťoučký', type: WORD_TYPE.emphasised },
    { kind: 'break' },
    { kind: 'text', text: '日本語 😀', type: WORD_TYPE.alt },
  ]);
  assert.equal(plainText(buf), 'Příliš žluťoučký\n日本語 😀');
  assert.deepEqual(tokens(Buffer.alloc(0)), []);
});

const chars = fc.constantFrom('a', 'b', 'Z', 'é', 'ř', '日', '😀', ' ', '  ', '\t', '\n', '\u00a0', '\u0001', '.');
const textArb = fc.string({ unit: chars, maxLength: 12 });
const typeArb = fc.integer({ min: 0, max: 5 }) as fc.Arbitrary<WordType>;
const plainOp: fc.Arbitrary<Op> = fc.oneof(
  { weight: 4, arbitrary: textArb.map((text) => ({ op: 'append' as const, text })) },
  typeArb.map((type) => ({ op: 'type' as const, type })),
  fc.constant({ op: 'break' as const }),
  fc.integer({ min: 2, max: (1 << 18) - 1 }).map((n) => ({ op: 'page' as const, n })),
);
const anyOp: fc.Arbitrary<Op> = fc.oneof(
  { weight: 4, arbitrary: plainOp },
  fc.integer({ min: 0, max: 1023 }).map((n) => ({ op: 'open' as const, n })),
  fc.constant({ op: 'close' as const }),
);

test('property: without a cap, plain text is the appended words with whitespace and breaks collapsed', () => {
  fc.assert(
    fc.property(fc.array(plainOp, { maxLength: 30 }), (ops) => {
      assert.equal(plainText(build(ops).finish()), modelPlain(ops));
    }),
  );
});

test('property: under any cap the text is valid, within the cap, and its plain text a word-boundary prefix', () => {
  fc.assert(
    fc.property(fc.array(plainOp, { maxLength: 30 }), fc.integer({ min: 1, max: 60 }), (ops, cap) => {
      const builder = build(ops, cap);
      const out = builder.finish();
      assert.ok(out.length <= cap);
      const plain = plainText(out);
      const model = modelPlain(ops);
      if (!builder.cut) assert.equal(plain, model);
      assert.ok(model.startsWith(plain), `${JSON.stringify(plain)} is not a prefix of ${JSON.stringify(model)}`);
      assert.ok(plain.length === model.length || model[plain.length] === ' ' || model[plain.length] === '\n' || plain === '');
    }),
  );
});

test('property: with links, what the builder writes reads back, and rewriting the tokens gives the same tokens', () => {
  fc.assert(
    fc.property(fc.array(anyOp, { maxLength: 40 }), fc.integer({ min: 1, max: 200 }), (ops, cap) => {
      const out = build(ops, cap).finish();
      assert.ok(out.length <= cap);
      const read = tokens(out);
      assert.deepEqual(tokens(rewrite(read)), read);
    }),
  );
});

test('property: arbitrary bytes read back or fail with SHERLOCK_CORRUPT_BUCKET at an offset inside them', () => {
  fc.assert(
    fc.property(fc.uint8Array({ maxLength: 40 }), (bytes) => {
      try {
        tokens(bytes);
      } catch (err) {
        assert.ok(err instanceof SherlockError && err.code === 'SHERLOCK_CORRUPT_BUCKET', String(err));
        assert.ok(err.place.offset !== undefined && err.place.offset >= 0 && err.place.offset < bytes.length);
      }
    }),
    { numRuns: 2000 },
  );
});

test('plainTextAndAnchors gives the plain text and the text of each link bracket by link number, whitespace collapsed, empty brackets empty', () => {
  const builder = new TextBuilder(1000);
  builder.append('before ');
  builder.openLink(0);
  builder.append('first   link');
  builder.setType(WORD_TYPE.emphasised);
  builder.append(' bold');
  builder.closeLink();
  builder.setType(WORD_TYPE.text);
  builder.append(' between ');
  builder.openLink(2);
  builder.append('third');
  builder.closeLink();
  builder.openLink(5);
  builder.closeLink();
  const bytes = builder.finish();
  const { text, anchors } = plainTextAndAnchors(bytes);
  assert.equal(text, plainText(bytes));
  assert.equal(text, 'before first link bold between third');
  assert.deepEqual([...anchors], [
    [0, 'first link bold'],
    [2, 'third'],
    [5, ''],
  ]);
});

test('link blocks: more than half of a block\'s text inside link brackets', () => {
  const builder = new TextBuilder(1 << 16);
  const link = (n: number, text: string): void => {
    builder.openLink(n);
    builder.append(text);
    builder.closeLink();
  };
  // 0: a menu item; 1: a paragraph with a link in it; 2: half and half is not more than half; 3: no link at all.
  link(0, 'Home page');
  builder.breakBlock();
  builder.append('Read the whole manual ');
  link(1, 'here');
  builder.breakBlock();
  builder.append('abcd');
  link(2, 'efgh');
  builder.breakBlock();
  builder.append('Plain words.');
  const tokens = [...readDocText(builder.finish())];
  assert.deepEqual([...linkBlocks(tokens)], [1, 0, 0, 0]);
  assert.deepEqual([...linkBlocks([])], [0]);
});
