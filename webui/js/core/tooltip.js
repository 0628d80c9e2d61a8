// Where a hover tooltip goes (issue 27): at the cursor, never under it,
// never off-screen. A `.chart-tooltip` is position: fixed (style.css), so
// its place is in window coordinates: the event's clientX/clientY, not
// the hovered canvas's own coordinates (using those put the GPU
// timeline's tooltip a sidebar's width away, and a band chart's at the
// page's top-left corner).

// The gap between the cursor and the tooltip's nearest corner, in CSS px:
// far enough that the pointer never covers the text, near enough that
// the eye does not travel (the tests allow at most this much).
export const TIP_OFFSET = 12;
// Kept free between the tooltip and the window's edges.
const EDGE = 4;

// Places tooltip t (shown, so it has a size) beside the cursor at
// (clientX, clientY): below-right, flipped to the left at the right edge
// and above at the bottom edge; clamped inside the window.
export function placeTip(t, clientX, clientY) {
  const tw = t.offsetWidth, th = t.offsetHeight;
  const W = window.innerWidth, H = window.innerHeight;
  let left = clientX + TIP_OFFSET;
  if (left + tw > W - EDGE) left = clientX - TIP_OFFSET - tw;
  let top = clientY + TIP_OFFSET;
  if (top + th > H - EDGE) top = clientY - TIP_OFFSET - th;
  t.style.left = Math.max(EDGE, Math.min(left, W - EDGE - tw)) + 'px';
  t.style.top = Math.max(EDGE, Math.min(top, H - EDGE - th)) + 'px';
}
