/**
 * Zip files for tests of hostile packages (test/gatherer/office.test.ts):
 * written byte by byte, so that an entry's header can declare a size its
 * data does not have, which no zip library would write. APPNOTE.TXT 6.3.10:
 * a local file header (§4.3.7) and the data for each entry, then the
 * central directory (§4.3.12) and its end record (§4.3.16); no zip64, no
 * data descriptors.
 */

import { crc32, deflateRawSync } from 'node:zlib';

export interface ZipEntry {
  name: string;
  /** The bytes as stored: deflated for method 8. */
  data: Buffer;
  /** 0 stored, 8 deflate. */
  method: 0 | 8;
  /** The uncompressed size the headers declare. */
  size: number;
  crc?: number;
}

/** An entry holding `content`, deflated, its headers true. */
export function deflatedEntry(name: string, content: string | Buffer): ZipEntry {
  const raw = typeof content === 'string' ? Buffer.from(content, 'utf8') : content;
  return { name, data: deflateRawSync(raw), method: 8, size: raw.length, crc: crc32(raw) };
}

/** The zip of `entries`, in order. */
export function zipOf(entries: readonly ZipEntry[]): Buffer {
  const locals: Buffer[] = [];
  const centrals: Buffer[] = [];
  let offset = 0;
  for (const entry of entries) {
    const name = Buffer.from(entry.name, 'utf8');
    const local = Buffer.alloc(30);
    local.writeUInt32LE(0x04034b50, 0);
    local.writeUInt16LE(20, 4); // version needed: 2.0
    local.writeUInt16LE(0x0800, 6); // UTF-8 names
    local.writeUInt16LE(entry.method, 8);
    local.writeUInt32LE(entry.crc ?? 0, 14);
    local.writeUInt32LE(entry.data.length, 18);
    local.writeUInt32LE(entry.size, 22);
    local.writeUInt16LE(name.length, 26);
    const central = Buffer.alloc(46);
    central.writeUInt32LE(0x02014b50, 0);
    central.writeUInt16LE(20, 4);
    central.writeUInt16LE(20, 6);
    central.writeUInt16LE(0x0800, 8);
    central.writeUInt16LE(entry.method, 10);
    central.writeUInt32LE(entry.crc ?? 0, 16);
    central.writeUInt32LE(entry.data.length, 20);
    central.writeUInt32LE(entry.size, 24);
    central.writeUInt16LE(name.length, 28);
    central.writeUInt32LE(offset, 42);
    locals.push(local, name, entry.data);
    centrals.push(central, name);
    offset += local.length + name.length + entry.data.length;
  }
  const directory = Buffer.concat(centrals);
  const end = Buffer.alloc(22);
  end.writeUInt32LE(0x06054b50, 0);
  end.writeUInt16LE(entries.length, 8);
  end.writeUInt16LE(entries.length, 10);
  end.writeUInt32LE(directory.length, 12);
  end.writeUInt32LE(offset, 16);
  return Buffer.concat([...locals, directory, end]);
}
