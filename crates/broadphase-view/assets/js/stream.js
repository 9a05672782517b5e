// The WebSocket to the server and the binary frames' layout (crates/broadphase-view/src/
// frame.rs documents it; the two change together). A frame is read as typed-array views
// over the received buffer: the boxes are never copied or parsed one by one.

const MAGIC = 0x31565042; // "BPV1", little-endian
const KIND_STEP = 1;
const KIND_CCD = 2;

const pad4 = (n) => (n + 3) & ~3;

/** Reads a step frame: header numbers and views of its sections. */
export function decodeStep(buffer) {
  const u = new Uint32Array(buffer, 0, 16);
  const f = new Float32Array(buffer, 0, 16);
  if (u[0] !== MAGIC || u[1] !== KIND_STEP) throw new Error('not a step frame');
  const n = u[3], p = u[4], m = u[7];
  let at = 64;
  const boxes = new Float32Array(buffer, at, n * 6); at += n * 24;
  const flags = new Uint8Array(buffer, at, n); at += pad4(n);
  const pairs = new Uint32Array(buffer, at, p * 2); at += p * 8;
  const overlayBoxes = new Float32Array(buffer, at, m * 6); at += m * 24;
  const overlayTags = new Uint8Array(buffer, at, m); at += pad4(m);
  if (at !== buffer.byteLength) throw new Error('step frame of the wrong length');
  const optional = (v) => (v === 0xffffffff ? null : v);
  return {
    step: u[2], boxCount: n, pairCount: p, contacts: u[5], overlayKind: u[6],
    phase: optional(u[8]), active: optional(u[9]), switches: u[10],
    hand: f[11], update: f[12], narrow: f[13], side: f[14], truncated: (u[15] & 1) === 1,
    boxes, flags, pairs, overlayBoxes, overlayTags,
  };
}

/** Reads a continuous-time frame. */
export function decodeCcd(buffer) {
  const u = new Uint32Array(buffer, 0, 24);
  const f = new Float32Array(buffer, 0, 24);
  const d = new Float64Array(buffer, 24, 3);
  if (u[0] !== MAGIC || u[1] !== KIND_CCD) throw new Error('not a continuous-time frame');
  const n = u[2], e = u[4], m = u[5];
  let at = 96;
  const bodies = new Float32Array(buffer, at, n * 4); at += n * 16;
  // Events interleave an f32 time with three u32: two views of the same bytes.
  const eventTimes = new Float32Array(buffer, at, e * 4);
  const eventWords = new Uint32Array(buffer, at, e * 4); at += e * 16;
  const swept = new Float32Array(buffer, at, m * 6); at += m * 24;
  if (at !== buffer.byteLength) throw new Error('continuous-time frame of the wrong length');
  return {
    bodyCount: n, dim: u[3], eventCount: e, time: d[0], collisions: d[1], wallHits: d[2],
    size: [f[12], f[13], f[14]], computeMs: f[15], events: u[16],
    cells: [u[17], u[18], u[19]], timeStep: f[20], behind: (u[21] & 1) === 1,
    bodies, eventTimes, eventWords, swept,
  };
}

/**
 * A stream at `path`: `handlers.hello(message)`, `handlers.frame(buffer, receivedAt)`,
 * `handlers.error(text)` and `handlers.closed()`. Commands are sent with `send(object)`.
 */
export class Stream {
  constructor(path, handlers) {
    const url = new URL(path, window.location.href);
    url.protocol = url.protocol === 'https:' ? 'wss:' : 'ws:';
    this.socket = new WebSocket(url);
    this.socket.binaryType = 'arraybuffer';
    this.socket.onmessage = (event) => {
      if (typeof event.data === 'string') {
        const message = JSON.parse(event.data);
        if (message.type === 'error') handlers.error(message.message);
        else if (message.type === 'hello') handlers.hello(message);
      } else {
        handlers.frame(event.data, performance.now());
      }
    };
    this.socket.onclose = () => handlers.closed();
  }

  get open() {
    return this.socket.readyState === WebSocket.OPEN;
  }

  send(command) {
    if (this.open) this.socket.send(JSON.stringify(command));
  }
}
