// The discrete page: one stream, the renderer, the chart and the controls. The page asks
// for the next step only once the previous frame has arrived, so frames never queue.

import { Camera } from './camera.js';
import { Renderer } from './renderer.js';
import { Stream, decodeStep } from './stream.js';
import { Chart, LEGEND } from './chart.js';
import { byId, fillSelect, onNumber, playButton, setText, showError } from './controls.js';

const OVERLAY_NAMES = ['', 'grid cells in use', 'hgrid cells by level', 'octree nodes',
  'tree nodes', 'sorted-axis intervals', 'masking slabs'];
// Page-side milliseconds of the last frames, read by the browser test.
const TIMINGS_KEPT = 2000;

const ui = {
  canvas: byId('scene'), algorithm: byId('algorithm'), objects: byId('objects'),
  speed: byId('mean-speed'), play: byId('play'), step: byId('step'), rate: byId('rate'),
  rateText: byId('rate-text'), stepCount: byId('step-count'), pairs: byId('pairs'),
  contacts: byId('contacts'), boxes: byId('boxes'), times: byId('times'), phase: byId('phase'),
  active: byId('active'), overlay: byId('overlay'), depth: byId('depth'),
  overlayText: byId('overlay-text'), pageMs: byId('page-ms'), error: byId('error'),
  legend: byId('legend'), chart: byId('chart'), status: byId('status'),
};

const camera = new Camera();
const renderer = new Renderer(ui.canvas);
const chart = new Chart(ui.chart);
const state = {
  algorithms: [], phases: [], pending: false, lastSent: 0, framed: false,
  step: 0, pairs: 0, contacts: 0, boxes: 0, overlayBoxes: 0, overlayKind: 0,
  active: null, switchedAt: null, frameMs: [], frames: 0,
};
window.viewState = state;

let drawQueued = false;
function queueDraw() {
  if (drawQueued) return;
  drawQueued = true;
  requestAnimationFrame(() => { drawQueued = false; renderer.draw(camera); });
}
camera.attach(ui.canvas, queueDraw);
window.addEventListener('resize', queueDraw);

for (const entry of LEGEND) {
  const item = document.createElement('span');
  item.innerHTML = '<i></i>';
  item.firstChild.style.background = entry.color;
  item.append(entry.name);
  ui.legend.append(item);
}

const stream = new Stream('stream', {
  hello(message) {
    state.algorithms = message.algorithms;
    state.phases = message.phases;
    state.framed = false;
    state.active = null;
    state.switchedAt = null;
    fillSelect(ui.algorithm, message.algorithms, message.algorithm);
    ui.objects.value = message.objects;
    ui.objects.max = message.max_objects;
    ui.speed.value = message.mean_speed;
    chart.clear();
  },
  frame(buffer, receivedAt) {
    const frame = decodeStep(buffer);
    state.pending = false;
    if (!state.framed) {
      camera.frame(frame.side);
      state.framed = true;
    }
    renderer.upload(frame);
    renderer.draw(camera);
    if (frame.step !== state.step || frame.step === 0) {
      chart.push(frame.hand, frame.update, frame.narrow, frame.pairCount);
    }
    chart.draw();
    show(frame);
    const ms = performance.now() - receivedAt;
    if (state.frameMs.length === TIMINGS_KEPT) state.frameMs.shift();
    state.frameMs.push(ms);
    state.frames += 1;
    setText(ui.pageMs, `${ms.toFixed(2)} ms`);
    if (player.playing) scheduleStep();
  },
  error(text) {
    state.pending = false;
    showError(ui.error, text);
  },
  closed() {
    setText(ui.status, 'disconnected: restart `broadphase view` and reload');
    player.set(false);
  },
});

function show(frame) {
  Object.assign(state, {
    step: frame.step, pairs: frame.pairCount, contacts: frame.contacts, boxes: frame.boxCount,
    overlayBoxes: frame.overlayBoxes.length / 6, overlayKind: frame.overlayKind,
  });
  setText(ui.stepCount, String(frame.step));
  setText(ui.pairs, String(frame.pairCount));
  setText(ui.contacts, String(frame.contacts));
  setText(ui.boxes, String(frame.boxCount));
  setText(ui.times, `hand ${frame.hand.toFixed(3)} · update ${frame.update.toFixed(3)} · `
    + `narrow ${frame.narrow.toFixed(3)} ms`);
  setText(ui.phase, frame.phase === null ? '—'
    : `${state.phases[frame.phase] ?? ''} (${frame.phase + 1} of ${state.phases.length})`);
  const active = frame.active === null ? '?' : state.algorithms[frame.active];
  if (state.active !== null && active !== state.active) state.switchedAt = frame.step;
  state.active = active;
  const switched = state.switchedAt === null ? '' : `, last switch at step ${state.switchedAt}`;
  setText(ui.active, ui.algorithm.value === 'adaptive'
    ? `${active} (${frame.switches} switches${switched})` : active);
  const overlay = OVERLAY_NAMES[frame.overlayKind] ?? '';
  const count = frame.overlayBoxes.length / 6;
  setText(ui.overlayText, frame.overlayKind === 0 ? (ui.overlay.checked ? 'none for this algorithm' : '')
    : `${count} ${overlay}${frame.truncated ? ' (cut)' : ''}`);
}

function send(command) {
  if (!stream.open) return;
  state.pending = true;
  state.lastSent = performance.now();
  stream.send(command);
}

let stepTimer = 0;
function scheduleStep() {
  clearTimeout(stepTimer);
  const rate = Number(ui.rate.value);
  const wait = Math.max(0, state.lastSent + 1000 / rate - performance.now());
  stepTimer = setTimeout(() => {
    if (player.playing && !state.pending) send({ cmd: 'step' });
  }, wait);
}

const player = playButton(ui.play, (playing) => {
  if (playing && !state.pending) scheduleStep();
});
ui.step.addEventListener('click', () => {
  if (!state.pending) send({ cmd: 'step' });
});
const rateText = () => setText(ui.rateText, `${ui.rate.value} steps/s`);
ui.rate.addEventListener('input', rateText);
rateText();

const restart = (fields) => send({ cmd: 'start', ...fields });
ui.algorithm.addEventListener('change', () => restart({ algorithm: ui.algorithm.value }));
onNumber(ui.objects, (objects) => restart({ objects: Math.round(objects) }));
onNumber(ui.speed, (speed) => restart({ mean_speed: speed }));
const overlay = () => send({ cmd: 'overlay', structure: ui.overlay.checked, depth: Number(ui.depth.value) });
ui.overlay.addEventListener('change', overlay);
ui.depth.addEventListener('change', overlay);
