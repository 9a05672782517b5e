// An orbit camera: yaw and pitch about a target, a distance, and a perspective projection.
// The matrices live in preallocated arrays so that drawing a frame allocates nothing.

const UP = [0, 1, 0];

export class Camera {
  constructor() {
    this.target = [0, 0, 0];
    this.distance = 10;
    this.yaw = 0.8;
    this.pitch = 0.5;
    this.fov = Math.PI / 4;
    this.viewProj = new Float32Array(16);
    this.view = new Float32Array(16);
    this.proj = new Float32Array(16);
  }

  /** Frames a cube of edge `side` with its low corner at the origin. */
  frame(side) {
    this.target = [side / 2, side / 2, side / 2];
    this.distance = side * 1.9;
  }

  orbit(dx, dy) {
    this.yaw -= dx * 0.005;
    // Kept off the poles, where the up vector would be parallel to the view direction.
    this.pitch = Math.min(1.5, Math.max(-1.5, this.pitch + dy * 0.005));
  }

  zoom(factor) {
    this.distance = Math.min(1e6, Math.max(1e-3, this.distance * factor));
  }

  /** Moves the target in the view plane by a drag of (dx, dy) pixels. */
  pan(dx, dy, heightPx) {
    const scale = (2 * this.distance * Math.tan(this.fov / 2)) / heightPx;
    const v = this.view;
    // The view matrix's rows are the camera's right and up axes.
    for (let k = 0; k < 3; k++) {
      this.target[k] += (-dx * v[k * 4] + dy * v[k * 4 + 1]) * scale;
    }
  }

  eye() {
    const cp = Math.cos(this.pitch);
    return [
      this.target[0] + this.distance * cp * Math.sin(this.yaw),
      this.target[1] + this.distance * Math.sin(this.pitch),
      this.target[2] + this.distance * cp * Math.cos(this.yaw),
    ];
  }

  /** Recomputes `viewProj` for a viewport of the given aspect ratio. */
  update(aspect) {
    lookAt(this.view, this.eye(), this.target, UP);
    const near = this.distance * 0.01;
    perspective(this.proj, this.fov, aspect, near, this.distance * 20);
    multiply(this.viewProj, this.proj, this.view);
    return this.viewProj;
  }

  /** Mouse: left drag orbits, right or shift drag pans, the wheel zooms. */
  attach(canvas, onChange) {
    let last = null;
    canvas.addEventListener('contextmenu', (e) => e.preventDefault());
    canvas.addEventListener('pointerdown', (e) => {
      last = { x: e.clientX, y: e.clientY, pan: e.button === 2 || e.shiftKey };
      canvas.setPointerCapture(e.pointerId);
    });
    canvas.addEventListener('pointerup', () => { last = null; });
    canvas.addEventListener('pointermove', (e) => {
      if (!last) return;
      const dx = e.clientX - last.x;
      const dy = e.clientY - last.y;
      if (last.pan) this.pan(dx, dy, canvas.clientHeight);
      else this.orbit(dx, -dy);
      last.x = e.clientX;
      last.y = e.clientY;
      onChange();
    });
    canvas.addEventListener('wheel', (e) => {
      e.preventDefault();
      this.zoom(Math.exp(e.deltaY * 0.001));
      onChange();
    }, { passive: false });
  }
}

function lookAt(out, eye, target, up) {
  let zx = eye[0] - target[0], zy = eye[1] - target[1], zz = eye[2] - target[2];
  let len = Math.hypot(zx, zy, zz) || 1;
  zx /= len; zy /= len; zz /= len;
  let xx = up[1] * zz - up[2] * zy, xy = up[2] * zx - up[0] * zz, xz = up[0] * zy - up[1] * zx;
  len = Math.hypot(xx, xy, xz) || 1;
  xx /= len; xy /= len; xz /= len;
  const yx = zy * xz - zz * xy, yy = zz * xx - zx * xz, yz = zx * xy - zy * xx;
  out.set([
    xx, yx, zx, 0,
    xy, yy, zy, 0,
    xz, yz, zz, 0,
    -(xx * eye[0] + xy * eye[1] + xz * eye[2]),
    -(yx * eye[0] + yy * eye[1] + yz * eye[2]),
    -(zx * eye[0] + zy * eye[1] + zz * eye[2]),
    1,
  ]);
}

function perspective(out, fov, aspect, near, far) {
  const f = 1 / Math.tan(fov / 2);
  out.fill(0);
  out[0] = f / aspect;
  out[5] = f;
  out[10] = (far + near) / (near - far);
  out[11] = -1;
  out[14] = (2 * far * near) / (near - far);
}

// Column-major, as WebGL reads uniform matrices: out = a · b.
function multiply(out, a, b) {
  for (let c = 0; c < 4; c++) {
    for (let r = 0; r < 4; r++) {
      let s = 0;
      for (let k = 0; k < 4; k++) s += a[k * 4 + r] * b[c * 4 + k];
      out[c * 4 + r] = s;
    }
  }
}
