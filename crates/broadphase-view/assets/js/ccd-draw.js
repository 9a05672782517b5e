// Canvas 2D drawing of the continuous-time frame: bodies as circles (spheres seen from
// above, nearer ones drawn last and lighter), the walls, the swept boxes or the
// calendar's cells, and the flashes of recent events.

export class CcdPainter {
  constructor(canvas) {
    this.canvas = canvas;
    this.ctx = canvas.getContext('2d');
    this.flash = new Float32Array(0);
    this.wallFlash = new Float32Array(6);
    this.order = new Uint32Array(0);
  }

  /** Lights up the frame's events; flashes fade over the next frames. */
  flashEvents(frame) {
    if (this.flash.length !== frame.bodyCount) {
      this.flash = new Float32Array(frame.bodyCount);
      this.order = new Uint32Array(frame.bodyCount);
    }
    for (let e = 0; e < frame.eventCount; e++) {
      const kind = frame.eventWords[e * 4 + 1];
      const a = frame.eventWords[e * 4 + 2];
      const b = frame.eventWords[e * 4 + 3];
      if (a < this.flash.length) this.flash[a] = 1;
      if (kind === 0 && b < this.flash.length) this.flash[b] = 1;
      else if (kind === 1 && b < 6) this.wallFlash[b] = 1;
    }
  }

  draw(frame) {
    const { canvas, ctx } = this;
    const ratio = window.devicePixelRatio || 1;
    const w = Math.round(canvas.clientWidth * ratio);
    const h = Math.round(canvas.clientHeight * ratio);
    if (canvas.width !== w || canvas.height !== h) {
      canvas.width = w;
      canvas.height = h;
    }
    ctx.fillStyle = '#0f1115';
    ctx.fillRect(0, 0, w, h);
    const [sx, sy] = frame.size;
    const scale = Math.min((w - 20) / sx, (h - 20) / sy);
    const ox = (w - sx * scale) / 2;
    const oy = (h - sy * scale) / 2;
    // World y up, canvas y down.
    const X = (x) => ox + x * scale;
    const Y = (y) => oy + (sy - y) * scale;
    this.drawWalls(ctx, X, Y, sx, sy, ratio);
    this.drawCells(ctx, frame, X, Y, sx, sy, ratio);
    this.drawBodies(ctx, frame, X, Y, scale);
    this.drawSwept(ctx, frame, X, Y, ratio);
    for (let k = 0; k < this.flash.length; k++) this.flash[k] *= 0.55;
    for (let k = 0; k < 6; k++) this.wallFlash[k] *= 0.55;
  }

  drawWalls(ctx, X, Y, sx, sy, ratio) {
    const walls = [[0, 0, 0, sy], [sx, 0, sx, sy], [0, 0, sx, 0], [0, sy, sx, sy]];
    for (let k = 0; k < 4; k++) {
      const f = this.wallFlash[k] > 0.15 ? this.wallFlash[k] : 0;
      ctx.strokeStyle = f > 0 ? `rgba(255,220,120,${0.4 + 0.6 * f})` : '#555';
      ctx.lineWidth = (1 + 3 * f) * ratio;
      const [x0, y0, x1, y1] = walls[k];
      ctx.beginPath();
      ctx.moveTo(X(x0), Y(y0));
      ctx.lineTo(X(x1), Y(y1));
      ctx.stroke();
    }
  }

  drawCells(ctx, frame, X, Y, sx, sy, ratio) {
    const [cx, cy] = frame.cells;
    if (!cx || !cy) return;
    ctx.strokeStyle = 'rgba(120,160,255,0.25)';
    ctx.lineWidth = ratio;
    ctx.beginPath();
    for (let i = 1; i < cx; i++) {
      ctx.moveTo(X((i * sx) / cx), Y(0));
      ctx.lineTo(X((i * sx) / cx), Y(sy));
    }
    for (let j = 1; j < cy; j++) {
      ctx.moveTo(X(0), Y((j * sy) / cy));
      ctx.lineTo(X(sx), Y((j * sy) / cy));
    }
    ctx.stroke();
  }

  drawBodies(ctx, frame, X, Y, scale) {
    const { bodies, bodyCount } = frame;
    const order = this.order;
    for (let i = 0; i < bodyCount; i++) order[i] = i;
    const depth = frame.dim === 3 ? frame.size[2] || 1 : 1;
    if (frame.dim === 3) order.sort((a, b) => bodies[a * 4 + 2] - bodies[b * 4 + 2]);
    for (let k = 0; k < bodyCount; k++) {
      const i = order[k];
      const x = bodies[i * 4], y = bodies[i * 4 + 1], z = bodies[i * 4 + 2], r = bodies[i * 4 + 3];
      const f = this.flash[i] > 0.15 ? this.flash[i] : 0;
      const light = frame.dim === 3 ? 0.45 + 0.55 * (z / depth) : 1;
      ctx.fillStyle = f > 0
        ? `rgb(255,${Math.round(255 - 120 * f)},${Math.round(120 - 100 * f)})`
        : `rgb(${Math.round(80 * light)},${Math.round(150 * light)},${Math.round(230 * light)})`;
      ctx.beginPath();
      ctx.arc(X(x), Y(y), Math.max(0.5, r * scale), 0, 2 * Math.PI);
      ctx.fill();
    }
  }

  drawSwept(ctx, frame, X, Y, ratio) {
    const s = frame.swept;
    if (s.length === 0) return;
    ctx.strokeStyle = 'rgba(150,255,150,0.5)';
    ctx.lineWidth = ratio;
    ctx.beginPath();
    for (let k = 0; k < s.length; k += 6) {
      ctx.rect(X(s[k]), Y(s[k + 4]), X(s[k + 3]) - X(s[k]), Y(s[k + 1]) - Y(s[k + 4]));
    }
    ctx.stroke();
  }
}
