// TensorBoard's scalar smoothing: an exponential moving average, debiased so
// the first points are not pulled towards zero. Non-finite points pass
// through unchanged and do not disturb the average (they are drawn as
// markers, not as part of the line).
export function smooth(values, weight) {
  const out = new Array(values.length);
  if (!(weight > 0)) {
    for (let i = 0; i < values.length; i++) out[i] = values[i];
    return out;
  }
  let last = 0;
  let n = 0;
  for (let i = 0; i < values.length; i++) {
    const v = values[i];
    if (!Number.isFinite(v)) { out[i] = v; continue; }
    last = last * weight + (1 - weight) * v;
    n++;
    out[i] = last / (1 - Math.pow(weight, n));
  }
  return out;
}
