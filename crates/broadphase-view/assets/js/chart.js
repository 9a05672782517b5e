// A rolling Canvas 2D chart of the last steps: the step's time as stacked bars (hand boxes
// over, update, narrow phase) and the pairs per step as a line on their own scale.

const SERIES = [
  { name: 'hand boxes', color: '#6fa8dc' },
  { name: 'update', color: '#f6b26b' },
  { name: 'narrow phase', color: '#93c47d' },
];

export class Chart {
  constructor(canvas, length = 240) {
    this.canvas = canvas;
    this.ctx = canvas.getContext('2d');
    this.length = length;
    // Ring buffers: one column per step, the newest at `head - 1`.
    this.times = SERIES.map(() => new Float32Array(length));
    this.pairs = new Float32Array(length);
    this.head = 0;
    this.count = 0;
  }

  clear() {
    this.head = 0;
    this.count = 0;
  }

  push(hand, update, narrow, pairs) {
    this.times[0][this.head] = hand;
    this.times[1][this.head] = update;
    this.times[2][this.head] = narrow;
    this.pairs[this.head] = pairs;
    this.head = (this.head + 1) % this.length;
    this.count = Math.min(this.count + 1, this.length);
  }

  draw() {
    const { canvas, ctx, length } = this;
    const ratio = window.devicePixelRatio || 1;
    const w = Math.round(canvas.clientWidth * ratio);
    const h = Math.round(canvas.clientHeight * ratio);
    if (canvas.width !== w || canvas.height !== h) {
      canvas.width = w;
      canvas.height = h;
    }
    ctx.fillStyle = '#14161b';
    ctx.fillRect(0, 0, w, h);
    let maxMs = 0.01;
    let maxPairs = 1;
    for (let i = 0; i < this.count; i++) {
      const k = (this.head - 1 - i + length) % length;
      maxMs = Math.max(maxMs, this.times[0][k] + this.times[1][k] + this.times[2][k]);
      maxPairs = Math.max(maxPairs, this.pairs[k]);
    }
    const barW = w / length;
    const top = 14 * ratio;
    const plotH = h - top;
    for (let i = 0; i < this.count; i++) {
      const k = (this.head - 1 - i + length) % length;
      const x = w - (i + 1) * barW;
      let y = h;
      for (let s = 0; s < SERIES.length; s++) {
        const bar = (this.times[s][k] / maxMs) * plotH;
        ctx.fillStyle = SERIES[s].color;
        ctx.fillRect(x, y - bar, Math.max(1, barW - 0.5), bar);
        y -= bar;
      }
    }
    ctx.strokeStyle = '#e06666';
    ctx.lineWidth = 1.5 * ratio;
    ctx.beginPath();
    for (let i = 0; i < this.count; i++) {
      const k = (this.head - 1 - i + length) % length;
      const x = w - (i + 0.5) * barW;
      const y = h - (this.pairs[k] / maxPairs) * plotH;
      if (i === 0) ctx.moveTo(x, y);
      else ctx.lineTo(x, y);
    }
    ctx.stroke();
    ctx.font = `${11 * ratio}px sans-serif`;
    ctx.fillStyle = '#ccc';
    ctx.fillText(`${maxMs.toFixed(2)} ms`, 4 * ratio, 11 * ratio);
    ctx.fillStyle = '#e06666';
    const label = `${maxPairs} pairs`;
    ctx.fillText(label, w - ctx.measureText(label).width - 4 * ratio, 11 * ratio);
  }
}

/** The legend's entries, for the page to show beside the chart. */
export const LEGEND = SERIES.concat([{ name: 'pairs', color: '#e06666' }]);
