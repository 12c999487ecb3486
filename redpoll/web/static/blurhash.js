// A BlurHash decoder (the published algorithm: base 83, a DC colour and
// AC cosine components in linear light), drawn on a small canvas that stands
// in for an image until it loads. A hash that does not parse gives null and
// the caller shows a flat colour instead.

const CHARS = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz#$%*+,-.:;=?@[]^_{|}~';
const VALID = /^[0-9A-Za-z#$%*+,\-.:;=?@[\]^_{|}~]{6,}$/;

function decode83(str) {
  let value = 0;
  for (const c of str) value = value * 83 + CHARS.indexOf(c);
  return value;
}

function toLinear(v) {
  const x = v / 255;
  return x <= 0.04045 ? x / 12.92 : ((x + 0.055) / 1.055) ** 2.4;
}

function toSRGB(v) {
  const x = Math.max(0, Math.min(1, v));
  return x <= 0.0031308 ? Math.round(x * 12.92 * 255 + 0.5) : Math.round((1.055 * x ** (1 / 2.4) - 0.055) * 255 + 0.5);
}

function signPow(v, e) { return Math.sign(v) * Math.abs(v) ** e; }

// The components of a hash, or null when it is not one.
export function components(hash) {
  if (typeof hash !== 'string' || !VALID.test(hash)) return null;
  const size = decode83(hash[0]);
  const nx = (size % 9) + 1, ny = Math.floor(size / 9) + 1;
  if (hash.length !== 4 + 2 * nx * ny) return null;
  const max = (decode83(hash[1]) + 1) / 166;
  const dc = decode83(hash.slice(2, 6));
  const colors = [[toLinear(dc >> 16), toLinear((dc >> 8) & 255), toLinear(dc & 255)]];
  for (let i = 1; i < nx * ny; i++) {
    const v = decode83(hash.slice(4 + i * 2, 6 + i * 2));
    colors.push([Math.floor(v / 361), Math.floor(v / 19) % 19, v % 19].map((q) => signPow((q - 9) / 9, 2) * max));
  }
  return { nx, ny, colors };
}

// RGBA pixels of a width x height picture of the hash (null: not a hash).
export function decode(hash, width, height) {
  const c = components(hash);
  if (!c) return null;
  const { nx, ny, colors } = c;
  const px = new Uint8ClampedArray(width * height * 4);
  const cosX = [], cosY = [];
  for (let x = 0; x < width; x++) for (let i = 0; i < nx; i++) cosX[x * nx + i] = Math.cos((Math.PI * x * i) / width);
  for (let y = 0; y < height; y++) for (let j = 0; j < ny; j++) cosY[y * ny + j] = Math.cos((Math.PI * y * j) / height);
  for (let y = 0; y < height; y++) {
    for (let x = 0; x < width; x++) {
      let r = 0, g = 0, b = 0;
      for (let j = 0; j < ny; j++) {
        for (let i = 0; i < nx; i++) {
          const basis = cosX[x * nx + i] * cosY[y * ny + j];
          const col = colors[i + j * nx];
          r += col[0] * basis; g += col[1] * basis; b += col[2] * basis;
        }
      }
      const o = 4 * (x + y * width);
      px[o] = toSRGB(r); px[o + 1] = toSRGB(g); px[o + 2] = toSRGB(b); px[o + 3] = 255;
    }
  }
  return px;
}

// The average colour of a hash as CSS rgb(), or null.
export function averageColor(hash) {
  const c = components(hash);
  if (!c) return null;
  return `rgb(${c.colors[0].map(toSRGB).join(' ')})`;
}

// A canvas showing the hash (32 x 32, stretched by CSS), or null.
export function blurhashCanvas(hash) {
  const size = 32;
  const px = decode(hash, size, size);
  if (!px) return null;
  const canvas = document.createElement('canvas');
  canvas.width = size; canvas.height = size;
  canvas.setAttribute('aria-hidden', 'true');
  canvas.className = 'blurhash';
  const g = canvas.getContext('2d');
  if (!g) return null;
  g.putImageData(new ImageData(px, size, size), 0, 0);
  return canvas;
}
