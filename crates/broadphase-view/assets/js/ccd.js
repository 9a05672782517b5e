// The continuous-time page: asks the server to advance simulated time by the wall time
// since the last frame times the time scale, one request at a time, and draws each frame.

import { Stream, decodeCcd } from './stream.js';
import { CcdPainter, Flashes } from './ccd-draw.js';
import { SpherePainter } from './spheres.js';
import { byId, fillSelect, onNumber, playButton, setText, showError } from './controls.js';

const MAX_ADVANCE = 60;
// Collisions per wall second are counted over this window.
const RATE_WINDOW_MS = 2000;
const TIMINGS_KEPT = 2000;

const ui = {
  canvas: byId('ccd-canvas'), glCanvas: byId('ccd-gl'), method: byId('method'), objects: byId('objects'), dim: byId('dim'),
  play: byId('play'), scale: byId('time-scale'), scaleText: byId('time-scale-text'),
  simTime: byId('sim-time'), collisions: byId('collisions'), rate: byId('rate'),
  wallHits: byId('wall-hits'), compute: byId('compute'), pageMs: byId('page-ms'),
  overlay: byId('overlay'), overlayText: byId('overlay-text'), error: byId('error'),
};

const flashes = new Flashes();
const painter = new CcdPainter(ui.canvas, flashes);
// Made when a 3D frame first arrives: a 2D-only page needs no WebGL.
let spheres = null;
const state = {
  pending: false, lastAdvance: 0, time: 0, dim: 0, collisions: 0, frames: 0, frameMs: [],
  samples: [], perWallSecond: 0,
};
window.ccdState = state;

const timeScale = () => 10 ** Number(ui.scale.value);
const showScale = () => setText(ui.scaleText, `${timeScale().toPrecision(2)}×`);
ui.scale.addEventListener('input', showScale);
showScale();

const stream = new Stream('ccd-stream', {
  hello(message) {
    fillSelect(ui.method, message.methods, message.method);
    ui.objects.value = message.objects;
    ui.objects.max = message.max_objects;
    ui.dim.value = String(message.dim);
    state.samples.length = 0;
  },
  frame(buffer, receivedAt) {
    const frame = decodeCcd(buffer);
    state.pending = false;
    flashes.add(frame);
    draw(frame);
    flashes.fade();
    show(frame, receivedAt);
    const ms = performance.now() - receivedAt;
    if (state.frameMs.length === TIMINGS_KEPT) state.frameMs.shift();
    state.frameMs.push(ms);
    state.frames += 1;
    setText(ui.pageMs, `${ms.toFixed(2)} ms`);
    if (player.playing) requestAnimationFrame(advance);
  },
  error(text) {
    state.pending = false;
    showError(ui.error, text);
  },
  closed() {
    showError(ui.error, 'disconnected: restart `broadphase view --ccd` and reload');
    player.set(false);
  },
});

/** Draws 2D frames on the 2D canvas and 3D frames as spheres on the WebGL2 one. */
function draw(frame) {
  const three = frame.dim === 3;
  ui.canvas.hidden = three;
  ui.glCanvas.hidden = !three;
  if (!three) {
    painter.draw(frame);
    return;
  }
  spheres ??= new SpherePainter(ui.glCanvas, flashes);
  spheres.draw(frame);
}

function show(frame, now) {
  state.time = frame.time;
  state.dim = frame.dim;
  state.collisions = frame.collisions;
  const samples = state.samples;
  samples.push(now, frame.collisions);
  while (samples.length > 4 && now - samples[0] > RATE_WINDOW_MS) samples.splice(0, 2);
  const span = now - samples[0];
  state.perWallSecond = span > 0 ? ((frame.collisions - samples[1]) * 1000) / span : 0;
  setText(ui.simTime, `${frame.time.toFixed(3)} s`);
  setText(ui.collisions, String(frame.collisions));
  setText(ui.wallHits, String(frame.wallHits));
  setText(ui.rate, player.playing ? state.perWallSecond.toFixed(0) : '—');
  setText(ui.compute, `${frame.computeMs.toFixed(1)} ms, ${frame.events} events`
    + (frame.behind ? ' (behind)' : ''));
  const overlay = ui.overlay.value;
  setText(ui.overlayText, overlay === 'swept'
    ? (frame.timeStep > 0 ? `Δt = ${frame.timeStep.toPrecision(3)} s` : 'only the swept-bvh method sweeps boxes')
    : overlay === 'cells'
      ? (frame.cells[0] ? `${frame.cells.filter((c) => c).join(' × ')} cells` : 'only the calendar method has cells')
      : '');
}

function send(command) {
  if (!stream.open) return;
  state.pending = true;
  stream.send(command);
}

function advance() {
  if (state.pending || !player.playing) return;
  const now = performance.now();
  const dt = Math.min(MAX_ADVANCE, ((now - state.lastAdvance) / 1000) * timeScale());
  state.lastAdvance = now;
  send({ cmd: 'advance', dt, overlay: ui.overlay.value });
}

const player = playButton(ui.play, (playing) => {
  state.lastAdvance = performance.now();
  state.samples.length = 0;
  if (playing) requestAnimationFrame(advance);
});
const restart = (fields) => send({ cmd: 'start', ...fields });
ui.method.addEventListener('change', () => restart({ method: ui.method.value }));
ui.dim.addEventListener('change', () => restart({ dim: Number(ui.dim.value) }));
onNumber(ui.objects, (objects) => restart({ objects: Math.round(objects) }));
ui.overlay.addEventListener('change', () => {
  if (!player.playing) send({ cmd: 'advance', dt: 0, overlay: ui.overlay.value });
});
