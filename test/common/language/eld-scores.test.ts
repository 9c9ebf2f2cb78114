import assert from 'node:assert/strict';
import test from 'node:test';
import fc from 'fast-check';
import { eld } from 'eld/small';
import { eldVerdict, type EldVerdict } from '../../../common/language/eld-scores.js';
import { windowsOf } from '../../../common/language/detect.js';
import { loadSamples } from '../../../bench/language/samples.js';

eld.enableTextCleanup(true);

/** What eld itself says of `text`, in eldVerdict's terms. */
function eldSays(text: string): EldVerdict {
  const result = eld.detect(text);
  const scores = Object.values(result.getScores()).sort((a, b) => b - a);
  return { lang: result.language, reliable: result.isReliable(), best: scores[0] ?? -Infinity, second: scores[1] ?? -Infinity };
}

function same(text: string): void {
  assert.deepEqual(eldVerdict(text), eldSays(text), JSON.stringify(text.slice(0, 80)));
}

const TEXTS = [
  '',
  ' ',
  'a',
  'ab',
  'abc',
  'abcd',
  'the',
  'Debian',
  'The quick brown fox jumps over the lazy dog, and then it runs away into the forest.',
  'Le système Debian perd les données de paquets sélectionnés et est sérieusement endommagé.',
  'Что такое менеджер пакетов? Менеджер пакетов следит за тем, какие программы установлены',
  'Το σύστημα διαχείρισης πακέτων του Debian παρακολουθεί ποια προγράμματα είναι εγκατεστημένα.',
  'نظام إدارة الحزم في دبيان يتتبع البرامج المثبتة على جهازك',
  'מערכת ניהול החבילות של דביאן עוקבת אחר התוכנות המותקנות במחשב שלך',
  'डेबियन की पैकेज प्रबंधन प्रणाली आपके कंप्यूटर पर स्थापित प्रोग्रामों का ध्यान रखती है',
  'ระบบจัดการแพ็กเกจของเดเบียนติดตามโปรแกรมที่ติดตั้งในเครื่องของคุณ',
  '데비안의 패키지 관리 시스템은 컴퓨터에 설치된 프로그램을 추적합니다',
  'Debian パッケージ管理の内部 Debian のパッケージ管理システムが内部的のどのように機能するのかを学びます。',
  'aptitude 的软件包状态 除了远程获取元数据，aptitude 命令还会将它在本地产生的安装状态信息保存在中',
  'Visit https://www.example.com/path or www.debian.org, mail admin@example.org, see foo.bar.com/x and ISO9660 or x86_64 2024.',
  "don't won’t it`s l'homme ''' ``` ’’’ rock'n'roll",
  'Supercalifragilisticexpialidociousnessandmoreletterstomakeitlongerthanseventycharactersintotal yes',
  'Überaus lange Wörter wie Donaudampfschifffahrtsgesellschaftskapitänsmützenabzeichenherstellergesellschaft gibt es',
  'emoji 😀😀 text 𝔘𝔫𝔦𝔠𝔬𝔡𝔢 letters and a lone \ud800 surrogate and \udc00 another',
  'İstanbul ve Iğdır ŞEHİRLERİ büyük harfle yazılır',
  'x'.repeat(2000),
  ('word ' + 'słowo ').repeat(200),
];

test('eldVerdict agrees with eld.detect on texts in many scripts, cut-offs, clean-ups and odd characters', () => {
  for (const text of TEXTS) same(text);
});

test('eldVerdict agrees with eld.detect on every window the detector reads of the labelled samples', () => {
  const samples = loadSamples({ short: 40, long: 20 });
  for (const sample of samples) for (const window of windowsOf(sample.text)) same(window);
});

test('eldVerdict agrees with eld.detect on random text of any code units', () => {
  const letters = fc.constantFrom(...'abcdefghijklmnopqrstuvwxyzäöüßéèàçñøåœ ’\'`-.@/:0123456789 αβγδεжзийклמנסעالمنهवहशสวัสดี한국어日本語中文'.split(''));
  fc.assert(
    fc.property(fc.oneof(fc.string({ unit: 'binary', maxLength: 1200 }), fc.string({ unit: letters, maxLength: 1200 }), fc.string({ unit: 'grapheme', maxLength: 400 })), (text) => {
      same(text);
    }),
    { numRuns: 3000 },
  );
});
