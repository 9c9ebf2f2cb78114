import assert from 'node:assert/strict';
import test from 'node:test';
import { MAX_CHARS, detectLanguage } from '../../../common/language/detect.js';
import { loadSamples, missingPackages } from '../../../bench/language/samples.js';

// Excerpts of Debian's documentation (debian-reference, aptitude-doc): a heading and its first sentence, as a
// search result shows a page, commands and file names included.
const SHORT: readonly [string, string][] = [
  ['fr', '2.5.9. La commande dpkg dpkg(1) est l’outil de plus bas niveau pour la gestion des paquets de Debian.'],
  ['es', '2.5.12. La orden dpkg-divert Las ubicaciones alternativas de un archivo que se realizan mediante la orden dpkg-divert(8) son una forma de obligar a dpkg(1) de instalar un archivo'],
  ['it', '2.6.3. Incompatibilità con vecchie configurazioni utente Se un programma con interfaccia grafica per il desktop presenta problemi di instabilità dopo un importante aggiornamento'],
  ['ja', '2.5. Debian パッケージ管理の内部 Debian のパッケージ管理システムが内部的のどのように機能するのかを学びます。'],
  ['zh', '2.5.6. aptitude 的软件包状态 除了远程获取元数据，aptitude 命令还会将它在本地产生的安装状态信息保存在 “/var/lib/aptitude/pkgstates” 中，这些信息只能被 aptitude 使用。'],
  ['ru', 'Что такое менеджер пакетов? Менеджер пакетов следит за тем, какие программы установлены на вашем компьютере'],
  ['cs', 'Sledování změn ve zdrojových textech aptitude Zdrojové texty aptitude se neustále mění podle toho, jak přicházejí nové vlastnosti, chyby a jejich opravy.'],
  ['nl', 'Overigens, wat is aptitude voor iets? aptitude is een pakketbeheerder voor Debian GNU/Linux systemen met veel mogelijkheden, gebaseerd op de gerenommeerde pakketbeheerdersinfrastructuur apt.'],
];

// Body text of a section, code blocks kept.
const LONG: readonly [string, string][] = [
  ['en', '2.7.13. Porting a package to the stable system For partial upgrades of the stable system, rebuilding a package within its environment using the source package is desirable. This avoids massive package upgrades due to their dependencies. Add the following entries to the "/etc/apt/sources.list" of a stable system.\ndeb-src http://deb.debian.org/debian unstable  main contrib non-free Install required packages for the compilation and download the source package as the following.\n# apt-get update\n# apt-get dist-upgrade\n# apt-get install fakeroot devscripts build-essential\n# apt-get build-dep foo'],
  ['de', '2.6.2. Fehler beim Zwischenspeichern der Paketdaten Fehler beim Zwischenspeichern der Paketdaten führen zu verblüffenden Meldungen, wie "GPG error: ... invalid: BADSIG ..." bei APT. Sie sollten alle zwischengespeicherten Daten mittels "sudo rm -rf /var/lib/apt/* " entfernen und es erneut versuchen. (Falls Sie apt-cacher-ng verwenden, führen Sie auch "sudo rm -rf /var/cache/apt-cacher-ng/* " aus.)'],
  ['fr', '2.6.7. Récupérer les données de sélection des paquets Si le fichier « /var/lib/dpkg/status » est corrompu pour une raison quelconque, le système Debian perd les données de paquets sélectionnés et est sérieusement endommagé. Regardez l’ancienne version du fichier « /var/lib/dpkg/status » dans « /var/lib/dpkg/status-old » ou « /var/backups/dpkg.status.* ».'],
  ['ja', '2.5.3. アーカイブレベルの "Release" ファイル ヒント アーカイブレベルの "Release" ファイルが apt_preferences(5) のルールに使われます。 "http://deb.debian.org/debian/dists/unstable/main/binary-amd64/Release" 等の "/etc/apt/sources.list" 中の "deb" 行で特定される全てのアーカイブロケーションにはアーカイブレベルの次に示すような "Release" ファイルがあります。\nArchive: unstable\nOrigin: Debian\nLabel: Debian'],
];

const INDONESIAN = '2.2.5. Tampilan paket di bawah aptitude Dalam mode aptitude(8) layar penuh interaktif, paket-paket dalam daftar paket ditampilkan seperti contoh berikutnya.';

test('short texts of Debian documentation are named in their language, confidently', () => {
  for (const [lang, text] of SHORT) assert.deepEqual(detectLanguage(text, {}), { lang, confident: true }, text);
});

test('long texts with commands and code are named in their language', () => {
  for (const [lang, text] of LONG) assert.deepEqual(detectLanguage(text, {}), { lang, confident: true }, text.slice(0, 60));
});

test('a declared language the detector agrees with is kept, in any tag form', () => {
  const [, french] = SHORT[0]!;
  for (const declared of ['fr', 'fr-FR', 'FR_ca', ' fr ']) assert.deepEqual(detectLanguage(french, { declared }), { lang: 'fr', confident: true }, declared);
});

test('a confident detection wins over a wrong declared language (a site template saying en)', () => {
  for (const [lang, text] of SHORT) assert.equal(detectLanguage(text, { declared: 'en' }).lang, lang, text);
});

test('a declared language the detector cannot tell apart from its answer is kept (Indonesian, detected as Malay)', () => {
  assert.equal(detectLanguage(INDONESIAN, {}).lang, 'ms');
  assert.deepEqual(detectLanguage(INDONESIAN, { declared: 'id-ID' }), { lang: 'id', confident: true });
});

test('too little text falls back to the declared language, else und', () => {
  for (const text of ['', 'ok', 'apt-get', '42']) {
    assert.deepEqual(detectLanguage(text, { declared: 'cs-CZ' }), { lang: 'cs', confident: false }, text);
    assert.deepEqual(detectLanguage(text, {}), { lang: 'und', confident: false }, text);
  }
});

test('junk declared tags are ignored', () => {
  const [, czech] = SHORT[6]!;
  for (const declared of ['', 'und', 'x-default', 'english', '12', '\u0000\u0001']) {
    assert.deepEqual(detectLanguage(czech, { declared }), { lang: 'cs', confident: true }, declared);
    assert.deepEqual(detectLanguage('', { declared }), { lang: 'und', confident: false }, declared);
  }
});

test('junk text is und and never throws', () => {
  let binary = '';
  for (let i = 0; i < 3000; i++) binary += String.fromCharCode((i * 7919) % 0x3000);
  const junk = ['', ' \n\t ', '0123456789 '.repeat(200), '!!!??? ### *** ---', '\ud800\udfff\ud800', '\u0000'.repeat(5000), 'http://a.example/b?c=1 192.168.0.1 0x7fff'];
  for (const text of junk) assert.deepEqual(detectLanguage(text, {}), { lang: 'und', confident: false }, JSON.stringify(text.slice(0, 20)));
  // Bytes read as Latin-1 or mixed scripts may look like some language; they must only not throw.
  const shaken = detectLanguage(binary, {});
  assert.equal(typeof shaken.lang, 'string');
  assert.doesNotThrow(() => detectLanguage(undefined as unknown as string, {}));
});

test('the work is bounded: a 10 MB text costs what its first characters cost', () => {
  const [, german] = LONG[1]!;
  const huge = (german + ' ').repeat(Math.ceil(10_000_000 / (german.length + 1)));
  assert.ok(huge.length >= 10_000_000);
  const small = huge.slice(0, MAX_CHARS);
  detectLanguage(small, {});
  const time = (text: string): number => {
    const start = process.hrtime.bigint();
    for (let i = 0; i < 20; i++) detectLanguage(text, {});
    return Number(process.hrtime.bigint() - start) / 20 / 1e6;
  };
  const hugeMs = time(huge);
  const smallMs = time(small);
  assert.equal(detectLanguage(huge, {}).lang, 'de');
  // Generous against a busy machine: reading all 10 MB would take hundreds of milliseconds.
  assert.ok(hugeMs < Math.max(20, smallMs * 10), `${hugeMs.toFixed(2)} ms for 10 MB, ${smallMs.toFixed(2)} ms for ${MAX_CHARS} characters`);
});

test('on the installed Debian documentation, nearly every sample of a language eld names is right', (t) => {
  const missing = missingPackages();
  if (missing.length > 0) {
    t.skip(`Debian packages not installed (apt-get install ${missing.join(' ')})`);
    return;
  }
  // Indonesian is left out: eld has no Indonesian (it says ms; the hint test above covers it).
  const samples = loadSamples({ short: 40, long: 20 }).filter((s) => s.lang !== 'id');
  for (const size of ['short', 'long'] as const) {
    const some = samples.filter((s) => s.size === size);
    const right = some.filter((s) => detectLanguage(s.text, {}).lang === s.lang).length;
    assert.ok(right / some.length >= 0.95, `${size}: ${right} of ${some.length} right`);
    const hinted = some.filter((s) => detectLanguage(s.text, { declared: s.lang }).lang === s.lang).length;
    assert.ok(hinted / some.length >= 0.98, `${size} with the right declared language: ${hinted} of ${some.length} right`);
  }
});

test('a long text is read at its start, middle and end, and the windows vote', () => {
  const [, german] = LONG[1]!;
  const czech = SHORT.find(([lang]) => lang === 'cs')![1];
  const english = LONG[0]![1];
  // English first (an epigraph, a site's menu), then German for the rest of the page.
  const text = `${english} ${german} ${german} ${german} ${german} ${german} ${german} ${german}`;
  assert.ok(text.length > 2 * MAX_CHARS);
  assert.equal(detectLanguage(text.slice(0, MAX_CHARS), {}).lang, 'en');
  assert.deepEqual(detectLanguage(text, {}), { lang: 'de', confident: true });
  // Samples taken by the caller vote the same way; a tie goes to the first window, as if it were alone.
  assert.deepEqual(detectLanguage([english, german, german], {}), { lang: 'de', confident: true });
  assert.deepEqual(detectLanguage([czech, german], {}), { lang: 'cs', confident: true });
  assert.deepEqual(detectLanguage([czech, german], { declared: 'de' }), { lang: 'cs', confident: true });
  assert.deepEqual(detectLanguage(['12345 67', german], {}), { lang: 'de', confident: true });
});
