/**
 * A client that writes whatever bytes a test asks for to one of our
 * listeners: a raw HTTP exchange, a WebSocket upgrade completed by hand, and
 * client frames built byte by byte (RFC 6455 §5.2), so hostile and fuzz
 * tests can send what no well-behaved library would.
 */

import { connect, type Socket } from 'node:net';

export interface Target {
  host: string;
  port: number;
}

/** A TCP connection from `localAddress` that sends `text` and collects what comes back until the server closes or `ms` pass. */
export function rawExchange(target: Target, text: string | Buffer, localAddress: string, ms = 5000): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect({ ...target, localAddress });
    let got = '';
    const timer = setTimeout(() => socket.destroy(), ms);
    socket.on('data', (chunk) => (got += chunk.toString('latin1')));
    socket.on('error', reject);
    socket.on('close', () => {
      clearTimeout(timer);
      resolve(got);
    });
    socket.end(text);
  });
}

/** A WebSocket upgrade request for sherlock.v1 as a client writes it, with `extra` header lines. */
export function upgradeRequest(target: Target, extra = ''): string {
  return `GET / HTTP/1.1\r\nHost: ${target.host}:${target.port}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Protocol: sherlock.v1\r\n${extra}\r\n`;
}

/** Opens a socket and completes the upgrade by hand; `closed` gives every byte the server sent after the 101. */
export function upgradedSocket(target: Target, localAddress: string): Promise<{ socket: Socket; closed: Promise<Buffer> }> {
  return new Promise((resolve, reject) => {
    const socket = connect({ ...target, localAddress });
    const chunks: Buffer[] = [];
    let head = true;
    const closed = new Promise<Buffer>((done) => socket.on('close', () => done(Buffer.concat(chunks))));
    socket.on('error', reject);
    socket.on('data', (chunk: Buffer) => {
      if (!head) return void chunks.push(chunk);
      const text = chunk.toString('latin1');
      if (!text.startsWith('HTTP/1.1 101')) return reject(new Error(`upgrade refused: ${text.split('\r\n')[0]}`));
      head = false;
      const end = chunk.indexOf('\r\n\r\n');
      if (end + 4 < chunk.length) chunks.push(chunk.subarray(end + 4));
      resolve({ socket, closed });
    });
    socket.write(upgradeRequest(target));
  });
}

/** A masked client frame with the payload length the header claims, which may be more than is sent; `fin` false starts a fragmented message. */
export function clientFrame(opcode: number, payload: Buffer, claimed = payload.length, fin = true): Buffer {
  const mask = Buffer.from([1, 2, 3, 4]);
  const first = (fin ? 0x80 : 0) | opcode;
  let header: Buffer;
  if (claimed < 126) header = Buffer.from([first, 0x80 | claimed]);
  else if (claimed < 65536) header = Buffer.from([first, 0x80 | 126, claimed >> 8, claimed & 0xff]);
  else {
    header = Buffer.alloc(10);
    header[0] = first;
    header[1] = 0x80 | 127;
    header.writeBigUInt64BE(BigInt(claimed), 2);
  }
  const masked = Buffer.from(payload.map((b, i) => b ^ mask[i % 4]!));
  return Buffer.concat([header, mask, masked]);
}

/** The close code of a server close frame in `data` (unmasked, RFC 6455 §5.5.1). */
export function closeCode(data: Buffer): number | undefined {
  const at = data.indexOf(0x88);
  return at < 0 || data.length < at + 4 ? undefined : data.readUInt16BE(at + 2);
}
