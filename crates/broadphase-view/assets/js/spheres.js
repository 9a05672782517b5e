// WebGL2 drawing of the 3D continuous-time frame: each body one instanced quad facing the
// camera, shaded in the fragment shader as the sphere it stands for (an impostor: two
// triangles per body whatever the detail), lit up by its events; the walls, the swept
// boxes and the calendar's cells as instanced wire boxes. Orbit, pan and zoom as on the
// discrete page (camera.js).

import { Camera } from './camera.js';
import { InstancedBoxes, compile, cubeEdges } from './renderer.js';

const SPHERE_VS = `#version 300 es
layout(location = 0) in vec2 corner;
layout(location = 1) in vec4 body;
layout(location = 2) in float flash;
uniform mat4 view;
uniform mat4 proj;
out vec2 uv;
out float lit;
void main() {
  // The quad is laid out in view space, so that it faces the camera from any side.
  vec4 centre = view * vec4(body.xyz, 1.0);
  gl_Position = proj * vec4(centre.xy + corner * body.w, centre.z, 1.0);
  uv = corner;
  lit = flash;
}`;

const SPHERE_FS = `#version 300 es
precision mediump float;
in vec2 uv;
in float lit;
out vec4 outColor;
void main() {
  float r2 = dot(uv, uv);
  if (r2 > 1.0) discard;
  vec3 normal = vec3(uv, sqrt(1.0 - r2));
  float light = 0.3 + 0.7 * max(dot(normal, normalize(vec3(0.4, 0.6, 0.7))), 0.0);
  vec3 base = mix(vec3(0.31, 0.59, 0.90), vec3(1.0, 0.62, 0.2), lit);
  outColor = vec4(base * light, 1.0);
}`;

const WIRE_VS = `#version 300 es
layout(location = 0) in vec3 corner;
layout(location = 2) in vec3 bmin;
layout(location = 3) in vec3 bmax;
uniform mat4 viewProj;
void main() { gl_Position = viewProj * vec4(mix(bmin, bmax, corner), 1.0); }`;

const WIRE_FS = `#version 300 es
precision mediump float;
uniform vec4 color;
out vec4 outColor;
void main() { outColor = color; }`;

// Most cell lines drawn on each wall: a finer calendar would fill the walls.
const MAX_CELL_LINES = 200;

export class SpherePainter {
  constructor(canvas, flashes) {
    const gl = canvas.getContext('webgl2', { antialias: true, preserveDrawingBuffer: true });
    if (!gl) throw new Error('this browser has no WebGL2');
    this.gl = gl;
    this.canvas = canvas;
    this.flashes = flashes;
    this.camera = new Camera();
    this.size = null;
    this.frame = null;
    this.sphereProgram = compile(gl, SPHERE_VS, SPHERE_FS);
    this.wireProgram = compile(gl, WIRE_VS, WIRE_FS);
    this.at = {
      view: gl.getUniformLocation(this.sphereProgram, 'view'),
      proj: gl.getUniformLocation(this.sphereProgram, 'proj'),
      viewProj: gl.getUniformLocation(this.wireProgram, 'viewProj'),
      color: gl.getUniformLocation(this.wireProgram, 'color'),
    };
    this.spheres = this.sphereArrays();
    this.walls = new InstancedBoxes(gl, cubeEdges(), 12, false);
    this.swept = new InstancedBoxes(gl, cubeEdges(), 12, false);
    this.cells = new InstancedBoxes(gl, cubeEdges(), 12, false);
    this.cellKey = '';
    this.zeroBytes = new Uint8Array(0);
    let queued = false;
    this.camera.attach(canvas, () => {
      if (queued || !this.frame) return;
      queued = true;
      requestAnimationFrame(() => { queued = false; this.render(); });
    });
  }

  sphereArrays() {
    const gl = this.gl;
    const vao = gl.createVertexArray();
    gl.bindVertexArray(vao);
    const quad = gl.createBuffer();
    gl.bindBuffer(gl.ARRAY_BUFFER, quad);
    gl.bufferData(gl.ARRAY_BUFFER, new Float32Array([-1, -1, 1, -1, 1, 1, -1, -1, 1, 1, -1, 1]),
      gl.STATIC_DRAW);
    gl.enableVertexAttribArray(0);
    gl.vertexAttribPointer(0, 2, gl.FLOAT, false, 8, 0);
    const bodies = gl.createBuffer();
    gl.bindBuffer(gl.ARRAY_BUFFER, bodies);
    gl.enableVertexAttribArray(1);
    gl.vertexAttribPointer(1, 4, gl.FLOAT, false, 16, 0);
    gl.vertexAttribDivisor(1, 1);
    const flash = gl.createBuffer();
    gl.bindBuffer(gl.ARRAY_BUFFER, flash);
    gl.enableVertexAttribArray(2);
    gl.vertexAttribPointer(2, 1, gl.FLOAT, false, 4, 0);
    gl.vertexAttribDivisor(2, 1);
    gl.bindVertexArray(null);
    return { vao, bodies, flash, count: 0 };
  }

  /** Draws a decoded 3D frame (stream.js) and keeps it to draw again when the view moves. */
  draw(frame) {
    const gl = this.gl;
    const [sx, sy, sz] = frame.size;
    if (!this.size || this.size[0] !== sx || this.size[1] !== sy || this.size[2] !== sz) {
      this.size = [sx, sy, sz];
      this.camera.frame(Math.max(sx, sy, sz));
      this.camera.target = [sx / 2, sy / 2, sz / 2];
      this.walls.upload(new Float32Array([0, 0, 0, sx, sy, sz]), new Uint8Array(1));
      this.cellKey = '';
    }
    gl.bindBuffer(gl.ARRAY_BUFFER, this.spheres.bodies);
    gl.bufferData(gl.ARRAY_BUFFER, frame.bodies, gl.DYNAMIC_DRAW);
    gl.bindBuffer(gl.ARRAY_BUFFER, this.spheres.flash);
    gl.bufferData(gl.ARRAY_BUFFER, this.flashes.body, gl.DYNAMIC_DRAW);
    this.spheres.count = frame.bodyCount;
    this.swept.upload(frame.swept, this.zeros(frame.swept.length / 6));
    this.uploadCells(frame.cells);
    this.frame = frame;
    this.render();
  }

  /** The calendar's cells as lines on the three walls through the origin. */
  uploadCells(cells) {
    const key = cells.join(',');
    if (key === this.cellKey) return;
    this.cellKey = key;
    const [sx, sy, sz] = this.size;
    const lines = [];
    const [cx, cy, cz] = cells.map((c) => Math.min(c, MAX_CELL_LINES));
    if (cx && cy && cz) {
      for (let i = 0; i <= cx; i++) {
        const x = (i * sx) / cx;
        lines.push(x, 0, 0, x, sy, 0, x, 0, 0, x, 0, sz);
      }
      for (let j = 0; j <= cy; j++) {
        const y = (j * sy) / cy;
        lines.push(0, y, 0, sx, y, 0, 0, y, 0, 0, y, sz);
      }
      for (let k = 0; k <= cz; k++) {
        const z = (k * sz) / cz;
        lines.push(0, 0, z, sx, 0, z, 0, 0, z, 0, sy, z);
      }
    }
    this.cells.upload(new Float32Array(lines), this.zeros(lines.length / 6));
  }

  /** `n` zero bytes: the wire boxes' per-instance byte, unused by their colour. */
  zeros(n) {
    if (this.zeroBytes.length < n) this.zeroBytes = new Uint8Array(Math.max(n, 2 * this.zeroBytes.length));
    return this.zeroBytes.subarray(0, n);
  }

  render() {
    const { gl, canvas, camera, at } = this;
    const ratio = window.devicePixelRatio || 1;
    const w = Math.max(1, Math.round(canvas.clientWidth * ratio));
    const h = Math.max(1, Math.round(canvas.clientHeight * ratio));
    if (canvas.width !== w || canvas.height !== h) {
      canvas.width = w;
      canvas.height = h;
    }
    gl.viewport(0, 0, w, h);
    gl.clearColor(0.06, 0.07, 0.08, 1);
    gl.clear(gl.COLOR_BUFFER_BIT | gl.DEPTH_BUFFER_BIT);
    gl.enable(gl.DEPTH_TEST);
    const viewProj = camera.update(w / h);
    gl.useProgram(this.sphereProgram);
    gl.uniformMatrix4fv(at.view, false, camera.view);
    gl.uniformMatrix4fv(at.proj, false, camera.proj);
    if (this.spheres.count > 0) {
      gl.bindVertexArray(this.spheres.vao);
      gl.drawArraysInstanced(gl.TRIANGLES, 0, 6, this.spheres.count);
    }
    gl.useProgram(this.wireProgram);
    gl.uniformMatrix4fv(at.viewProj, false, viewProj);
    const wallFlash = Math.max(...this.flashes.wall);
    gl.uniform4f(at.color, 0.35 + 0.6 * wallFlash, 0.35 + 0.5 * wallFlash, 0.35, 1);
    this.walls.draw(gl.LINES, 24);
    gl.uniform4f(at.color, 0.47, 0.63, 1, 1);
    this.cells.draw(gl.LINES, 24);
    gl.uniform4f(at.color, 0.59, 1, 0.59, 1);
    this.swept.draw(gl.LINES, 24);
  }
}
