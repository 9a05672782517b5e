// WebGL2 drawing of the discrete scene: the boxes as instanced shaded cubes coloured by
// their flags, and the overlay and the world's bounds as instanced wire cubes. The frame's
// typed arrays go to the GPU as they arrived: no per-box work in JavaScript.

const BOX_VS = `#version 300 es
layout(location = 0) in vec3 corner;
layout(location = 1) in vec3 normal;
layout(location = 2) in vec3 bmin;
layout(location = 3) in vec3 bmax;
layout(location = 4) in uint flags;
uniform mat4 viewProj;
out vec3 color;
void main() {
  gl_Position = viewProj * vec4(mix(bmin, bmax, corner), 1.0);
  vec3 base = (flags & 4u) != 0u ? vec3(0.90, 0.20, 0.18)
            : (flags & 2u) != 0u ? vec3(1.00, 0.66, 0.16)
            : vec3(0.36, 0.60, 0.88);
  // Static proxies: greyed, so that the moving ones stand out.
  if ((flags & 1u) != 0u) base = mix(base, vec3(0.42), 0.65);
  float light = 0.45 + 0.55 * max(dot(normal, normalize(vec3(0.4, 0.8, 0.45))), 0.0);
  color = base * light;
}`;

const LINE_VS = `#version 300 es
layout(location = 0) in vec3 corner;
layout(location = 2) in vec3 bmin;
layout(location = 3) in vec3 bmax;
layout(location = 4) in uint tag;
uniform mat4 viewProj;
uniform int kind;
out vec3 color;
void main() {
  gl_Position = viewProj * vec4(mix(bmin, bmax, corner), 1.0);
  if (tag == 255u) { color = vec3(0.55); return; }
  // Trees of the static proxies carry tag 128 + depth: drawn in a cooler range.
  float t = float(tag & 127u);
  float hue = (kind == 5 || kind == 6) ? t / 3.0 : fract(t * 0.13 + ((tag & 128u) != 0u ? 0.5 : 0.0));
  color = 0.55 + 0.45 * cos(6.2831 * (hue + vec3(0.0, 0.33, 0.67)));
}`;

const FS = `#version 300 es
precision mediump float;
in vec3 color;
out vec4 outColor;
void main() { outColor = vec4(color, 1.0); }`;

// A unit cube's 12 triangles (corner, normal) and 12 edges.
function cubeTriangles() {
  const faces = [
    [0, [1, 0, 0]], [0, [-1, 0, 0]], [1, [0, 1, 0]], [1, [0, -1, 0]], [2, [0, 0, 1]], [2, [0, 0, -1]],
  ];
  const out = [];
  for (const [axis, n] of faces) {
    const side = n[axis] > 0 ? 1 : 0;
    const [u, v] = [(axis + 1) % 3, (axis + 2) % 3];
    const quad = [[0, 0], [1, 0], [1, 1], [0, 0], [1, 1], [0, 1]];
    for (const [a, b] of quad) {
      const p = [0, 0, 0];
      p[axis] = side; p[u] = a; p[v] = b;
      out.push(...p, ...n);
    }
  }
  return new Float32Array(out);
}

export function cubeEdges() {
  const out = [];
  for (let axis = 0; axis < 3; axis++) {
    for (let k = 0; k < 4; k++) {
      const p = [0, 0, 0];
      p[(axis + 1) % 3] = k & 1; p[(axis + 2) % 3] = k >> 1;
      out.push(...p);
      p[axis] = 1;
      out.push(...p);
    }
  }
  return new Float32Array(out);
}

export function compile(gl, vs, fs) {
  const program = gl.createProgram();
  for (const [type, src] of [[gl.VERTEX_SHADER, vs], [gl.FRAGMENT_SHADER, fs]]) {
    const shader = gl.createShader(type);
    gl.shaderSource(shader, src);
    gl.compileShader(shader);
    if (!gl.getShaderParameter(shader, gl.COMPILE_STATUS)) throw new Error(gl.getShaderInfoLog(shader));
    gl.attachShader(program, shader);
  }
  gl.linkProgram(program);
  if (!gl.getProgramParameter(program, gl.LINK_STATUS)) throw new Error(gl.getProgramInfoLog(program));
  return program;
}

// One instanced draw: a static mesh, and per-instance boxes (6 f32) and one byte each.
export class InstancedBoxes {
  constructor(gl, mesh, stride, withNormals) {
    this.gl = gl;
    this.count = 0;
    this.vao = gl.createVertexArray();
    gl.bindVertexArray(this.vao);
    const meshBuffer = gl.createBuffer();
    gl.bindBuffer(gl.ARRAY_BUFFER, meshBuffer);
    gl.bufferData(gl.ARRAY_BUFFER, mesh, gl.STATIC_DRAW);
    gl.enableVertexAttribArray(0);
    gl.vertexAttribPointer(0, 3, gl.FLOAT, false, stride, 0);
    if (withNormals) {
      gl.enableVertexAttribArray(1);
      gl.vertexAttribPointer(1, 3, gl.FLOAT, false, stride, 12);
    }
    this.boxes = gl.createBuffer();
    gl.bindBuffer(gl.ARRAY_BUFFER, this.boxes);
    for (const [loc, offset] of [[2, 0], [3, 12]]) {
      gl.enableVertexAttribArray(loc);
      gl.vertexAttribPointer(loc, 3, gl.FLOAT, false, 24, offset);
      gl.vertexAttribDivisor(loc, 1);
    }
    this.bytes = gl.createBuffer();
    gl.bindBuffer(gl.ARRAY_BUFFER, this.bytes);
    gl.enableVertexAttribArray(4);
    gl.vertexAttribIPointer(4, 1, gl.UNSIGNED_BYTE, 1, 0);
    gl.vertexAttribDivisor(4, 1);
    gl.bindVertexArray(null);
  }

  upload(boxes, bytes) {
    const gl = this.gl;
    gl.bindBuffer(gl.ARRAY_BUFFER, this.boxes);
    gl.bufferData(gl.ARRAY_BUFFER, boxes, gl.DYNAMIC_DRAW);
    gl.bindBuffer(gl.ARRAY_BUFFER, this.bytes);
    gl.bufferData(gl.ARRAY_BUFFER, bytes, gl.DYNAMIC_DRAW);
    this.count = bytes.length;
  }

  draw(mode, vertices) {
    if (this.count === 0) return;
    this.gl.bindVertexArray(this.vao);
    this.gl.drawArraysInstanced(mode, 0, vertices, this.count);
  }
}

export class Renderer {
  constructor(canvas) {
    const gl = canvas.getContext('webgl2', { antialias: true, preserveDrawingBuffer: true });
    if (!gl) throw new Error('this browser has no WebGL2');
    this.gl = gl;
    this.canvas = canvas;
    this.boxProgram = compile(gl, BOX_VS, FS);
    this.lineProgram = compile(gl, LINE_VS, FS);
    this.boxViewProj = gl.getUniformLocation(this.boxProgram, 'viewProj');
    this.lineViewProj = gl.getUniformLocation(this.lineProgram, 'viewProj');
    this.lineKind = gl.getUniformLocation(this.lineProgram, 'kind');
    this.solids = new InstancedBoxes(gl, cubeTriangles(), 24, true);
    this.overlay = new InstancedBoxes(gl, cubeEdges(), 12, false);
    this.bounds = new InstancedBoxes(gl, cubeEdges(), 12, false);
    this.overlayKind = 0;
    this.side = -1;
    this.showBoxes = true;
  }

  /** Hands a decoded step frame (stream.js) to the GPU. */
  upload(frame) {
    this.solids.upload(frame.boxes, frame.flags);
    this.overlay.upload(frame.overlayBoxes, frame.overlayTags);
    this.overlayKind = frame.overlayKind;
    if (frame.side !== this.side) {
      this.side = frame.side;
      const s = frame.side;
      this.bounds.upload(new Float32Array([0, 0, 0, s, s, s]), new Uint8Array([255]));
    }
  }

  /** Matches the drawing buffer to the canvas's size on the page; true when it changed. */
  resize() {
    const c = this.canvas;
    const ratio = window.devicePixelRatio || 1;
    const w = Math.max(1, Math.round(c.clientWidth * ratio));
    const h = Math.max(1, Math.round(c.clientHeight * ratio));
    if (c.width === w && c.height === h) return false;
    c.width = w;
    c.height = h;
    return true;
  }

  draw(camera) {
    const gl = this.gl;
    this.resize();
    gl.viewport(0, 0, this.canvas.width, this.canvas.height);
    gl.clearColor(0.07, 0.08, 0.1, 1);
    gl.clear(gl.COLOR_BUFFER_BIT | gl.DEPTH_BUFFER_BIT);
    gl.enable(gl.DEPTH_TEST);
    const viewProj = camera.update(this.canvas.width / this.canvas.height);
    if (this.showBoxes) {
      gl.useProgram(this.boxProgram);
      gl.uniformMatrix4fv(this.boxViewProj, false, viewProj);
      this.solids.draw(gl.TRIANGLES, 36);
    }
    gl.useProgram(this.lineProgram);
    gl.uniformMatrix4fv(this.lineViewProj, false, viewProj);
    gl.uniform1i(this.lineKind, this.overlayKind);
    this.bounds.draw(gl.LINES, 24);
    this.overlay.draw(gl.LINES, 24);
  }
}
