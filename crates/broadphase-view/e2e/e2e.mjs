// End-to-end test of `broadphase view` in headless Chromium: starts the release binary,
// drives both pages, saves the screenshots in docs/, and reports the page's own per-frame
// timings at 20,000 boxes (reported, not asserted: they depend on the machine).
//
// BROADPHASE_BIN overrides the binary (default: target/release/broadphase of the
// workspace); CHROMIUM overrides the browser (default: /usr/bin/chromium).

import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdirSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';

const here = dirname(fileURLToPath(import.meta.url));
const root = resolve(here, '../../..');
const bin = process.env.BROADPHASE_BIN ?? join(root, 'target/release/broadphase');
const docs = join(root, 'docs');
const TIMING_BOXES = 20000;
const TIMING_FRAMES = 40;

let passed = 0;
let failed = 0;
async function check(name, body) {
  const start = Date.now();
  try {
    await body();
    passed += 1;
    console.log(`ok   ${name} (${((Date.now() - start) / 1000).toFixed(1)} s)`);
  } catch (e) {
    failed += 1;
    console.log(`FAIL ${name}: ${e.message.split('\n')[0]}`);
  }
}
function assert(condition, message) {
  if (!condition) throw new Error(message);
}

/** Starts the server; resolves with the process and the URL it prints first. */
async function startServer(args) {
  const child = spawn(bin, ['view', '--port', '0', ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
  let stderr = '';
  child.stderr.on('data', (d) => { stderr += d; });
  let stdout = '';
  const url = await new Promise((resolveUrl, reject) => {
    child.stdout.on('data', (d) => {
      stdout += d;
      const line = stdout.split('\n');
      if (line.length > 1) resolveUrl(line[0].trim());
    });
    child.on('exit', (code) => reject(new Error(`view exited with ${code}: ${stderr.trim()}`)));
  });
  return { child, url, stderr: () => stderr };
}

const browser = await chromium.launch({
  executablePath: process.env.CHROMIUM ?? '/usr/bin/chromium',
  args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking',
    '--disable-quic', '--disable-component-update', '--disable-sync',
    '--no-first-run', '--use-angle=swiftshader', '--enable-unsafe-swiftshader'],
});
const server = await startServer(['--objects', '3000']);
const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
const pageErrors = [];
page.on('pageerror', (e) => pageErrors.push(e.message));
page.on('console', (m) => { if (m.type() === 'error') pageErrors.push(m.text()); });
// Nothing may come from anywhere but the viewer's own servers.
const foreign = [];
page.on('request', (r) => {
  if (!/^(http|ws):\/\/127\.0\.0\.1:\d+\//.test(r.url()) && !r.url().startsWith('data:')) {
    foreign.push(r.url());
  }
});

/** Opens `url`: it must load the first time. */
async function open(url) {
  await page.goto(url, { waitUntil: 'domcontentloaded', timeout: 20000 });
}

const state = () => page.evaluate(() => ({ ...window.viewState, frameMs: undefined }));
const waitFor = (fn, arg, timeout = 60000) => page.waitForFunction(fn, arg, { timeout });

/** Distinct colours in the canvas `selector` (copied to a 2D canvas to read it). */
const colours = (selector) => page.$eval(selector, (canvas) => {
  const copy = document.createElement('canvas');
  copy.width = canvas.width;
  copy.height = canvas.height;
  const ctx = copy.getContext('2d');
  ctx.drawImage(canvas, 0, 0);
  const data = ctx.getImageData(0, 0, copy.width, copy.height).data;
  const seen = new Set();
  for (let i = 0; i < data.length && seen.size < 1000; i += 4 * 7) {
    seen.add((data[i] << 16) | (data[i + 1] << 8) | data[i + 2]);
  }
  return seen.size;
});

async function stepTimes(count) {
  for (let k = 0; k < count; k++) {
    const before = (await state()).step;
    await page.click('#step');
    await waitFor((s) => window.viewState.step === s + 1 && !window.viewState.pending, before);
  }
}

async function restart(selector, value) {
  await page.$eval(selector, (el, v) => {
    el.value = v;
    el.dispatchEvent(new Event('change'));
  }, String(value));
}

async function chooseAlgorithm(name) {
  await page.selectOption('#algorithm', name);
  await waitFor((n) => window.viewState.step === 0 && !window.viewState.pending
    && document.getElementById('algorithm').value === n, name);
}

await check('the page loads and the scene renders', async () => {
  await open(server.url);
  await waitFor(() => window.viewState && window.viewState.frames >= 1);
  const s = await state();
  assert(s.boxes === 3000, `${s.boxes} boxes`);
  const n = await colours('#scene');
  assert(n > 10, `the canvas has ${n} colours`);
});

await check('play advances the step counter', async () => {
  await page.click('#play');
  await waitFor(() => Number(document.getElementById('step-count').textContent) >= 10);
  await page.click('#play');
  const shown = Number(await page.textContent('#step-count'));
  assert(shown >= 10, `step counter at ${shown}`);
});

await check('switching the algorithm keeps the pair count at the same step', async () => {
  const counts = {};
  for (const name of ['sap', 'bvh', 'grid', 'octree']) {
    await chooseAlgorithm(name);
    await stepTimes(8);
    const s = await state();
    counts[name] = `${s.pairs}/${s.contacts}`;
  }
  const values = Object.values(counts);
  assert(values.every((v) => v === values[0]), JSON.stringify(counts));
  assert(Number(values[0].split('/')[0]) > 0, 'no pairs at all');
});

await check('the overlay toggles', async () => {
  for (const name of ['octree', 'dynamic-tree', 'grid', 'hgrid', 'sort-and-sweep', 'masking']) {
    await chooseAlgorithm(name);
    await page.check('#overlay');
    await waitFor(() => window.viewState.overlayBoxes > 0 && !window.viewState.pending);
    await page.uncheck('#overlay');
    await waitFor(() => window.viewState.overlayBoxes === 0 && !window.viewState.pending);
  }
});

await check('the discrete screenshot', async () => {
  await chooseAlgorithm('dynamic-tree');
  await page.fill('#depth', '5');
  await page.check('#overlay');
  await page.click('#play');
  await waitFor(() => window.viewState.step >= 30);
  await page.click('#play');
  await waitFor(() => !window.viewState.pending);
  mkdirSync(docs, { recursive: true });
  await page.screenshot({ path: join(docs, 'view-discrete.png') });
  await page.uncheck('#overlay');
});

await check(`page timings at ${TIMING_BOXES} boxes (reported)`, async () => {
  await chooseAlgorithm('sort-and-sweep');
  await restart('#objects', TIMING_BOXES);
  await waitFor((n) => window.viewState.boxes === n && !window.viewState.pending, TIMING_BOXES, 120000);
  await page.evaluate(() => { window.viewState.frameMs.length = 0; });
  await page.$eval('#rate', (el) => { el.value = el.max; });
  await page.click('#play');
  await waitFor((n) => window.viewState.frameMs.length >= n, TIMING_FRAMES, 180000);
  await page.click('#play');
  const ms = (await page.evaluate(() => window.viewState.frameMs.slice())).sort((a, b) => a - b);
  const at = (q) => ms[Math.min(ms.length - 1, Math.floor(q * ms.length))].toFixed(2);
  console.log(`page-side ms per frame at ${TIMING_BOXES} boxes over ${ms.length} frames: `
    + `median ${at(0.5)}, p90 ${at(0.9)}, max ${at(1)}`);
});

await check('the --ccd page runs', async () => {
  await open(new URL('ccd.html', server.url).href);
  await waitFor(() => window.ccdState && window.ccdState.frames >= 1);
  await page.selectOption('#overlay', 'cells');
  await page.click('#play');
  await waitFor(() => window.ccdState.collisions > 20 && window.ccdState.frames > 20);
  const n = await colours('#ccd-canvas');
  assert(n > 5, `the canvas has ${n} colours`);
  await page.screenshot({ path: join(docs, 'view-ccd.png') });
  await page.click('#play');
});

await check('the --ccd page draws 3D spheres in WebGL2', async () => {
  await page.selectOption('#dim', '3');
  await waitFor(() => window.ccdState.dim === 3 && !window.ccdState.pending);
  const frames = await page.evaluate(() => window.ccdState.frames);
  await page.click('#play');
  await waitFor((f) => window.ccdState.frames > f + 20, frames);
  await page.click('#play');
  await waitFor(() => !window.ccdState.pending);
  const shown = (selector) => page.$eval(selector, (c) => getComputedStyle(c).display !== 'none');
  assert(!(await shown('#ccd-canvas')) && await shown('#ccd-gl'), 'the 2D canvas is still shown');
  const n = await colours('#ccd-gl');
  assert(n > 5, `the canvas has ${n} colours`);
  await page.screenshot({ path: join(docs, 'view-ccd-3d.png') });
});

await check('a phased scene shows its phase, adaptive its algorithm', async () => {
  const phased = await startServer(['--scene', join(root, 'scenes/calm-burst-settle.toml'),
    '--objects', '500', '--algorithm', 'adaptive']);
  try {
    await open(phased.url);
    await waitFor(() => window.viewState && window.viewState.frames >= 1);
    // The scene's first phase starts after its warm-up steps.
    await page.click('#play');
    await waitFor(() => window.viewState.step >= 12);
    await page.click('#play');
    const phase = await page.textContent('#phase');
    const active = await page.textContent('#active');
    assert(phase.startsWith('calm'), `phase shown: ${phase}`);
    assert(/switches/.test(active) && !active.startsWith('adaptive'), `running: ${active}`);
  } finally {
    phased.child.kill('SIGTERM');
  }
});

await check('nothing was loaded from the network and the page logged no error', async () => {
  assert(foreign.length === 0, `requests: ${foreign.join(', ')}`);
  assert(pageErrors.length === 0, `errors: ${pageErrors.join(' | ')}`);
});

await browser.close();

await check('SIGTERM stops the server with 143 and one line', async () => {
  server.child.kill('SIGTERM');
  const [code] = await once(server.child, 'exit');
  assert(code === 143, `exit code ${code}`);
  const lines = server.stderr().trim().split('\n');
  assert(lines.length === 1, `stderr: ${server.stderr()}`);
});

console.log(`${passed} passed, ${failed} failed`);
process.exit(failed === 0 ? 0 : 1);
