// Canvas 2D drawing of the 2D continuous-time frame: bodies as circles, the walls, the swept
// boxes or the calendar's cells, and the flashes of recent events (the 3D frame is drawn in
// WebGL2 by spheres.js).

/** How lit each body and wall is by its recent events; flashes fade over the next frames. */
export class Flashes {
  constructor() {
    this.body = new Float32Array(0);
    this.wall = new Float32Array(6);
  }

  /** Lights up the frame's events. */
  add(frame) {
    if (this.body.length !== frame.bodyCount) this.body = new Float32Array(frame.bodyCount);
    for (let e = 0; e < frame.eventCount; e++) {
      const kind = frame.eventWords[e * 4 + 1];
      const a = frame.eventWords[e * 4 + 2];
      const b = frame.eventWords[e * 4 + 3];
      if (a < this.body.length) this.body[a] = 1;
      if (kind === 0 && b < this.body.length) this.body[b] = 1;
      else if (kind === 1 && b < 6) this.wall[b] = 1;
    }
  }

  /** Fades every flash, once per drawn frame; faint ones go out. */
  fade() {
    for (const values of [this.body, this.wall]) {
      for (let k = 0; k < values.length; k++) values[k] = values[k] > 0.15 ? values[k] * 0.55 : 0;
    }
  }
}

export class CcdPainter {
  constructor(canvas, flashes) {
    this.canvas = canvas;
    this.ctx = canvas.getContext('2d');
    this.flashes = flashes;
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
  }

  drawWalls(ctx, X, Y, sx, sy, ratio) {
    const walls = [[0, 0, 0, sy], [sx, 0, sx, sy], [0, 0, sx, 0], [0, sy, sx, sy]];
    for (let k = 0; k < 4; k++) {
      const f = this.flashes.wall[k];
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
    const flash = this.flashes.body;
    for (let i = 0; i < bodyCount; i++) {
      const x = bodies[i * 4], y = bodies[i * 4 + 1], r = bodies[i * 4 + 3];
      const f = flash[i];
      ctx.fillStyle = f > 0
        ? `rgb(255,${Math.round(255 - 120 * f)},${Math.round(120 - 100 * f)})`
        : 'rgb(80,150,230)';
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
