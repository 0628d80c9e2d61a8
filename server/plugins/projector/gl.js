// The Projector's point cloud on WebGL 1, our own (~200 lines) rather than
// three.js: one draw call of gl.POINTS over position, colour, size and
// sprite-index buffers is all the view needs, and a vendored three.js
// (600 KB minified) would add nothing to it. Points are round dots, or
// their sprite cut from the atlas in the fragment shader (gl_PointCoord).
//
// Coordinates are given in [-1, 1] per axis (page.js normalises them).
// 3-D: a perspective camera orbiting the origin (theta, phi, distance);
// 2-D: an orthographic view with zoom and pan. project() returns the
// points' screen positions for picking, with the same matrix.
//
// Level of detail: a still frame always draws every point. While the view
// moves (a drag, the wheel, a turn), the time between two moving frames is
// measured, per point drawn; when a frame of every point would take more
// than FRAME_BUDGET_MS, a moving frame draws every k-th point only (k so
// that it fits the budget, never fewer than LOD_MIN_POINTS), and the whole
// cloud again as soon as the view stops. On a GPU 100,000 points are far
// under the budget and every point is always drawn; on a software
// rasteriser (a browser without GPU) turning stays fluid instead of
// dropping to a few frames a second.

// A moving frame's budget: 30 frames a second.
export const FRAME_BUDGET_MS = 33;
// The fewest points a moving frame draws (the cloud's shape stays readable).
export const LOD_MIN_POINTS = 10000;

const VERT = `
attribute vec3 aPos;
attribute vec4 aCol;
attribute float aSize;
attribute float aSprite;
uniform mat4 uMvp;
uniform float uScale;
varying vec4 vCol;
varying float vSprite;
void main() {
  gl_Position = uMvp * vec4(aPos, 1.0);
  gl_PointSize = aSize * uScale;
  vCol = aCol;
  vSprite = aSprite;
}`;

const FRAG = `
precision mediump float;
varying vec4 vCol;
varying float vSprite;
uniform sampler2D uTex;
uniform float uUseSprite;
uniform vec3 uGrid;
void main() {
  vec2 pc = gl_PointCoord;
  if (uUseSprite > 0.5 && vSprite >= 0.0) {
    // uGrid: cells per row, then the atlas's size in cells (fractional
    // when the image is not a whole number of cells).
    float row = floor((vSprite + 0.5) / uGrid.x);
    float col = vSprite - row * uGrid.x;
    vec4 t = texture2D(uTex, (vec2(col, row) + pc) / uGrid.yz);
    // A frame in the point's colour keeps "colour by" readable over the
    // images; dimmed points (search) stay dim as images too.
    vec2 e = min(pc, 1.0 - pc);
    gl_FragColor = min(e.x, e.y) < 0.1 ? vCol : vec4(t.rgb, vCol.a);
    return;
  }
  vec2 c = pc - 0.5;
  if (dot(c, c) > 0.25) discard;
  gl_FragColor = vCol;
}`;

function compile(gl, type, src) {
  const s = gl.createShader(type);
  gl.shaderSource(s, src);
  gl.compileShader(s);
  if (!gl.getShaderParameter(s, gl.COMPILE_STATUS)) throw new Error('WebGL shader: ' + gl.getShaderInfoLog(s));
  return s;
}

function mul(a, b) {
  const o = new Float32Array(16);
  for (let i = 0; i < 4; i++) for (let j = 0; j < 4; j++) {
    let s = 0;
    for (let k = 0; k < 4; k++) s += a[k * 4 + j] * b[i * 4 + k];
    o[i * 4 + j] = s;
  }
  return o;
}

export class PointCloud {
  constructor(canvas) {
    this.canvas = canvas;
    const gl = canvas.getContext('webgl', { antialias: true, preserveDrawingBuffer: true });
    if (!gl) throw new Error('WebGL is not available in this browser');
    this.gl = gl;
    const p = gl.createProgram();
    gl.attachShader(p, compile(gl, gl.VERTEX_SHADER, VERT));
    gl.attachShader(p, compile(gl, gl.FRAGMENT_SHADER, FRAG));
    gl.linkProgram(p);
    if (!gl.getProgramParameter(p, gl.LINK_STATUS)) throw new Error('WebGL program: ' + gl.getProgramInfoLog(p));
    this.prog = p;
    this.loc = {};
    for (const a of ['aPos', 'aCol', 'aSize', 'aSprite']) this.loc[a] = gl.getAttribLocation(p, a);
    for (const u of ['uMvp', 'uScale', 'uTex', 'uUseSprite', 'uGrid']) this.loc[u] = gl.getUniformLocation(p, u);
    this.buf = { aPos: gl.createBuffer(), aCol: gl.createBuffer(), aSize: gl.createBuffer(), aSprite: gl.createBuffer() };
    this.n = 0;
    this.dim = 2;
    this.cam = { theta: 0.6, phi: 0.35, dist: 3.2, zoom: 1, panX: 0, panY: 0 };
    this.tex = null;
    this.grid = [1, 1, 1];
    this.useSprite = false;
    this.bg = [1, 1, 1];
    // With a focus (a search, a picked point), the dimmed points first and
    // the lit ones last, without depth test, so nothing dim hides them.
    this.order = null;
    this.idx = gl.createBuffer();
    this.uint = !!gl.getExtension('OES_element_index_uint');
    // level of detail: the last still frame's cost, the moving frames'
    // subset (its stride and size) and whether the view moves now
    this.msPerPoint = 0;
    this.lastT = 0;
    this.lodIdx = gl.createBuffer();
    this.lodStride = 0;
    this.lodN = 0;
    this.moving = false;
  }

  // The points a moving frame draws: every k-th of the draw order.
  lodSubset(k) {
    if (this.lodStride === k) return;
    const src = this.order, n = src ? src.length : this.n;
    const m = Math.ceil(n / k);
    const sub = this.uint ? new Uint32Array(m) : new Uint16Array(m);
    for (let i = 0, j = 0; j < m; i += k, j++) sub[j] = src ? src[i] : i;
    const gl = this.gl;
    gl.bindBuffer(gl.ELEMENT_ARRAY_BUFFER, this.lodIdx);
    gl.bufferData(gl.ELEMENT_ARRAY_BUFFER, sub, gl.DYNAMIC_DRAW);
    this.lodStride = k;
    this.lodN = m;
  }

  // Points the last frame drew (all of them but while moving over budget).
  drawn() { return this.lastDrawn || 0; }

  setOrder(order) {
    if (order && !this.uint && order.length > 65535) order = null;
    this.order = order;
    this.lodStride = 0;
    if (!order) return;
    const gl = this.gl;
    gl.bindBuffer(gl.ELEMENT_ARRAY_BUFFER, this.idx);
    gl.bufferData(gl.ELEMENT_ARRAY_BUFFER, this.uint ? order : Uint16Array.from(order), gl.DYNAMIC_DRAW);
  }

  setPositions(pos, dim) {
    const gl = this.gl;
    this.pos = pos;
    this.n = pos.length / 3;
    this.dim = dim;
    this.lodStride = 0;
    this.msPerPoint = 0;
    gl.bindBuffer(gl.ARRAY_BUFFER, this.buf.aPos);
    gl.bufferData(gl.ARRAY_BUFFER, pos, gl.DYNAMIC_DRAW);
  }

  // Colours as RGBA bytes, sizes in CSS px, sprite index per point (-1:
  // a dot).
  setStyle(col, size, sprite) {
    const gl = this.gl;
    gl.bindBuffer(gl.ARRAY_BUFFER, this.buf.aCol);
    gl.bufferData(gl.ARRAY_BUFFER, col, gl.DYNAMIC_DRAW);
    gl.bindBuffer(gl.ARRAY_BUFFER, this.buf.aSize);
    gl.bufferData(gl.ARRAY_BUFFER, size, gl.DYNAMIC_DRAW);
    gl.bindBuffer(gl.ARRAY_BUFFER, this.buf.aSprite);
    gl.bufferData(gl.ARRAY_BUFFER, sprite, gl.DYNAMIC_DRAW);
  }

  // The sprite atlas: grid = [cells per row, width and height in cells].
  setSprite(img, grid) {
    const gl = this.gl;
    if (!this.tex) this.tex = gl.createTexture();
    gl.bindTexture(gl.TEXTURE_2D, this.tex);
    gl.texImage2D(gl.TEXTURE_2D, 0, gl.RGBA, gl.RGBA, gl.UNSIGNED_BYTE, img);
    // Atlases are rarely powers of two: no mipmaps, clamp, nearest (the
    // cells are small images meant to be seen pixel by pixel).
    gl.texParameteri(gl.TEXTURE_2D, gl.TEXTURE_MIN_FILTER, gl.NEAREST);
    gl.texParameteri(gl.TEXTURE_2D, gl.TEXTURE_MAG_FILTER, gl.NEAREST);
    gl.texParameteri(gl.TEXTURE_2D, gl.TEXTURE_WRAP_S, gl.CLAMP_TO_EDGE);
    gl.texParameteri(gl.TEXTURE_2D, gl.TEXTURE_WRAP_T, gl.CLAMP_TO_EDGE);
    this.grid = grid;
  }

  matrix() {
    const c = this.cam;
    const w = this.canvas.width || 1, hgt = this.canvas.height || 1;
    const aspect = w / hgt;
    if (this.dim === 2) {
      const sx = c.zoom / Math.max(aspect, 1) * 0.92, sy = c.zoom * Math.min(aspect, 1) * 0.92;
      return new Float32Array([sx, 0, 0, 0, 0, sy, 0, 0, 0, 0, -0.1, 0, c.panX * sx, c.panY * sy, 0, 1]);
    }
    // View: orbit around the origin; projection: 45 degree perspective.
    const ct = Math.cos(c.theta), st = Math.sin(c.theta), cp = Math.cos(c.phi), sp = Math.sin(c.phi);
    const eye = [c.dist * cp * st, c.dist * sp, c.dist * cp * ct];
    const f = [-eye[0] / c.dist, -eye[1] / c.dist, -eye[2] / c.dist];
    let s = [f[1] * 0 - f[2] * 1, f[2] * 0 - f[0] * 0, f[0] * 1 - f[1] * 0];
    const sl = Math.hypot(s[0], s[1], s[2]) || 1;
    s = s.map((v) => v / sl);
    const u = [s[1] * f[2] - s[2] * f[1], s[2] * f[0] - s[0] * f[2], s[0] * f[1] - s[1] * f[0]];
    const view = new Float32Array([
      s[0], u[0], -f[0], 0, s[1], u[1], -f[1], 0, s[2], u[2], -f[2], 0,
      -(s[0] * eye[0] + s[1] * eye[1] + s[2] * eye[2]), -(u[0] * eye[0] + u[1] * eye[1] + u[2] * eye[2]), f[0] * eye[0] + f[1] * eye[1] + f[2] * eye[2], 1]);
    // The 45 degrees span the narrower side, so a tall view cuts nothing.
    const fov = Math.min(aspect, 1) / Math.tan(Math.PI / 8), near = 0.05, far = 50;
    const proj = new Float32Array([fov / aspect, 0, 0, 0, 0, fov, 0, 0, 0, 0, (far + near) / (near - far), -1, 0, 0, 2 * far * near / (near - far), 0]);
    return mul(proj, view);
  }

  draw() {
    const gl = this.gl;
    const cv = this.canvas;
    gl.viewport(0, 0, cv.width, cv.height);
    gl.clearColor(this.bg[0], this.bg[1], this.bg[2], 1);
    gl.clear(gl.COLOR_BUFFER_BIT | gl.DEPTH_BUFFER_BIT);
    if (!this.n) return;
    gl.useProgram(this.prog);
    if (this.dim === 3 && !this.order) gl.enable(gl.DEPTH_TEST); else gl.disable(gl.DEPTH_TEST);
    gl.enable(gl.BLEND);
    gl.blendFunc(gl.SRC_ALPHA, gl.ONE_MINUS_SRC_ALPHA);
    const bind = (name, size, type, norm) => {
      gl.bindBuffer(gl.ARRAY_BUFFER, this.buf[name]);
      gl.enableVertexAttribArray(this.loc[name]);
      gl.vertexAttribPointer(this.loc[name], size, type, norm, 0, 0);
    };
    bind('aPos', 3, gl.FLOAT, false);
    bind('aCol', 4, gl.UNSIGNED_BYTE, true);
    bind('aSize', 1, gl.FLOAT, false);
    bind('aSprite', 1, gl.FLOAT, false);
    gl.uniformMatrix4fv(this.loc.uMvp, false, this.matrix());
    gl.uniform1f(this.loc.uScale, window.devicePixelRatio || 1);
    gl.uniform1f(this.loc.uUseSprite, this.useSprite && this.tex ? 1 : 0);
    gl.uniform3f(this.loc.uGrid, this.grid[0], this.grid[1], this.grid[2]);
    if (this.tex) { gl.activeTexture(gl.TEXTURE0); gl.bindTexture(gl.TEXTURE_2D, this.tex); gl.uniform1i(this.loc.uTex, 0); }
    const all = this.order ? this.order.length : this.n;
    const type = this.uint ? gl.UNSIGNED_INT : gl.UNSIGNED_SHORT;
    // the cost of a moving frame, per point, from the time since the last
    // one (a pause of a second or more in a drag measures nothing)
    const now = performance.now();
    if (this.moving && this.lastT && now - this.lastT < 1000 && this.lastDrawn) {
      const per = (now - this.lastT) / this.lastDrawn;
      this.msPerPoint = this.msPerPoint ? (this.msPerPoint + per) / 2 : per;
    }
    this.lastT = this.moving ? now : 0;
    const want = this.moving && this.msPerPoint ? Math.max(LOD_MIN_POINTS, Math.floor(FRAME_BUDGET_MS / this.msPerPoint)) : all;
    const k = want < all ? Math.ceil(all / want) : 1;
    if (k > 1 && (this.uint || all <= 65535)) {
      this.lodSubset(k);
      gl.bindBuffer(gl.ELEMENT_ARRAY_BUFFER, this.lodIdx);
      gl.drawElements(gl.POINTS, this.lodN, type, 0);
      this.lastDrawn = this.lodN;
      return;
    }
    if (this.order) {
      gl.bindBuffer(gl.ELEMENT_ARRAY_BUFFER, this.idx);
      gl.drawElements(gl.POINTS, this.order.length, type, 0);
    } else gl.drawArrays(gl.POINTS, 0, this.n);
    this.lastDrawn = all;
  }

  // Screen positions (CSS px) of every point into out (2n floats; NaN when
  // behind the camera), for picking and labels.
  project(out) {
    const m = this.matrix();
    const n = this.n, p = this.pos;
    const w = this.canvas.clientWidth, hgt = this.canvas.clientHeight;
    for (let i = 0; i < n; i++) {
      const x = p[3 * i], y = p[3 * i + 1], z = p[3 * i + 2];
      const cx = m[0] * x + m[4] * y + m[8] * z + m[12];
      const cy = m[1] * x + m[5] * y + m[9] * z + m[13];
      const cw = m[3] * x + m[7] * y + m[11] * z + m[15];
      if (!(cw > 0)) { out[2 * i] = NaN; out[2 * i + 1] = NaN; continue; }
      out[2 * i] = (cx / cw * 0.5 + 0.5) * w;
      out[2 * i + 1] = (0.5 - cy / cw * 0.5) * hgt;
    }
    return out;
  }
}
