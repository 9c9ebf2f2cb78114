/**
 * PDFs written by hand for hostile tests: what no tool would write (a
 * compression bomb of a content stream, a page tree of a hundred thousand
 * pages, arrays nested a hundred thousand deep). pdfFile() lays out the
 * objects, the cross-reference table and the trailer (ISO 32000-1 §7.5).
 */

import { createDeflate } from 'node:zlib';

/** A PDF of these objects, numbered from 1; object 1 is the catalog. */
export function pdfFile(objects: ReadonlyArray<string | Buffer>): Buffer {
  const parts = [Buffer.from('%PDF-1.7\n%\xe2\xe3\xcf\xd3\n', 'latin1')];
  const offsets: number[] = [];
  let at = parts[0]!.length;
  objects.forEach((body, i) => {
    const object = Buffer.concat([Buffer.from(`${i + 1} 0 obj\n`), typeof body === 'string' ? Buffer.from(body, 'latin1') : body, Buffer.from('\nendobj\n')]);
    offsets.push(at);
    parts.push(object);
    at += object.length;
  });
  const xref = `xref\n0 ${objects.length + 1}\n0000000000 65535 f \n${offsets.map((o) => `${String(o).padStart(10, '0')} 00000 n \n`).join('')}`;
  parts.push(Buffer.from(`${xref}trailer\n<< /Size ${objects.length + 1} /Root 1 0 R >>\nstartxref\n${at}\n%%EOF\n`, 'latin1'));
  return Buffer.concat(parts);
}

/** A stream object of `data` (already encoded by the filters `dict` names). */
export function pdfStream(dict: string, data: Buffer): Buffer {
  return Buffer.concat([Buffer.from(`<< ${dict} /Length ${data.length} >>\nstream\n`, 'latin1'), data, Buffer.from('\nendstream', 'latin1')]);
}

/** Catalog, page tree and one page showing `words` in Helvetica; `page` adds to the page's dictionary. */
export function onePagePdf(words: string, options: { contents?: Buffer; page?: string } = {}): Buffer {
  return pdfFile([
    '<< /Type /Catalog /Pages 2 0 R >>',
    '<< /Type /Pages /Kids [3 0 R] /Count 1 >>',
    `<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R /Resources << /Font << /F1 5 0 R >> >> ${options.page ?? ''} >>`,
    options.contents ?? pdfStream('', Buffer.from(`BT /F1 12 Tf 72 720 Td (${words}) Tj ET`, 'latin1')),
    '<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>',
  ]);
}

/** A content stream that inflates to `mib` MiB of spaces, then shows `words`: a megabyte or so on the wire. */
export async function flateBomb(mib: number, words: string): Promise<Buffer> {
  const deflate = createDeflate({ level: 9 });
  const chunks: Buffer[] = [];
  deflate.on('data', (chunk: Buffer) => chunks.push(chunk));
  const ended = new Promise((resolve) => deflate.on('end', resolve));
  const spaces = Buffer.alloc(1024 * 1024, 0x20);
  for (let i = 0; i < mib; i++) deflate.write(spaces);
  deflate.end(Buffer.from(`BT /F1 12 Tf 72 720 Td (${words}) Tj ET`, 'latin1'));
  await ended;
  return pdfStream('/Filter /FlateDecode', Buffer.concat(chunks));
}

/** A page tree naming one page `count` times. */
export function manyPagesPdf(count: number): Buffer {
  return pdfFile([
    '<< /Type /Catalog /Pages 2 0 R >>',
    `<< /Type /Pages /Kids [${'3 0 R '.repeat(count)}] /Count ${count} >>`,
    '<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R /Resources << /Font << /F1 5 0 R >> >> >>',
    pdfStream('', Buffer.from('BT /F1 12 Tf 72 720 Td (again) Tj ET', 'latin1')),
    '<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>',
  ]);
}
