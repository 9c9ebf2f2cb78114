/**
 * Czech: the light stemmer of Dolamic and Savoy ("Indexing and stemming
 * approaches for the Czech language", Information Processing and
 * Management 45, 2009), written here from the paper's rules. Snowball's
 * Czech in snowball-stemmers cuts far more ("režimu" → "rež", the
 * adjective "celoobrazovkového" and its other cases to three different
 * stems) and leaves the palatal alternations apart ("koláče" → "kolák",
 * "koláč" → "koláč"); the light stemmer takes off the case ending, then a
 * possessive suffix, and folds the consonants that alternate at the end of
 * a stem (č and c to k, ž and z to h, čt to ck, št to sk), so that the cases
 * of a noun or adjective meet, which is what a query in one case needs.
 *
 * Input: a lower-case word with its accents; the caller makes it plain.
 */

/** Case endings by length (the longest that fits is taken), with the shortest word each may be cut from. */
const CASE_ENDINGS: ReadonlyArray<{ minLength: number; endings: readonly string[] }> = [
  { minLength: 8, endings: ['atech'] },
  { minLength: 7, endings: ['ětem', 'etem', 'atům'] },
  {
    minLength: 6,
    endings: ['ech', 'ich', 'ích', 'ého', 'ěmi', 'emi', 'ému', 'ěte', 'ete', 'ěti', 'eti', 'ího', 'iho', 'ími', 'ímu', 'imu', 'ách', 'ata', 'aty', 'ých', 'ama', 'ami', 'ové', 'ovi', 'ými'],
  },
  { minLength: 5, endings: ['em', 'es', 'ém', 'ím', 'ům', 'at', 'ám', 'os', 'us', 'ým', 'mi', 'ou'] },
  { minLength: 4, endings: ['a', 'e', 'i', 'o', 'u', 'ů', 'y', 'á', 'é', 'í', 'ý', 'ě'] },
];
const POSSESSIVES = ['ov', 'in', 'ův'];
const POSSESSIVE_MIN_LENGTH = 6;

function withoutCase(word: string): string {
  for (const { minLength, endings } of CASE_ENDINGS) {
    if (word.length < minLength) continue;
    const ending = endings.find((e) => word.endsWith(e));
    if (ending !== undefined) return word.slice(0, -ending.length);
  }
  return word;
}

function withoutPossessive(word: string): string {
  if (word.length < POSSESSIVE_MIN_LENGTH) return word;
  return POSSESSIVES.some((p) => word.endsWith(p)) ? word.slice(0, -2) : word;
}

/** The alternating consonants at the end of a stem folded into one. */
function normalized(stem: string): string {
  if (stem.endsWith('čt')) return `${stem.slice(0, -2)}ck`;
  if (stem.endsWith('št')) return `${stem.slice(0, -2)}sk`;
  const last = stem.at(-1);
  if (last === 'c' || last === 'č') return `${stem.slice(0, -1)}k`;
  if (last === 'z' || last === 'ž') return `${stem.slice(0, -1)}h`;
  // A mobile e before the last consonant ("domeček" and "domečku"), and ů for o inside a stem ("dům", "domu").
  if (stem.length > 1 && stem.at(-2) === 'e') return stem.slice(0, -2) + last;
  if (stem.length > 2 && stem.at(-2) === 'ů') return `${stem.slice(0, -2)}o${last}`;
  return stem;
}

/** The light stem of a Czech word (lower case, accents kept). */
export function czechStem(word: string): string {
  const stem = withoutPossessive(withoutCase(word));
  return stem === '' ? word : normalized(stem);
}
