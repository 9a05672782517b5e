// Small helpers binding the page's inputs: each returns the element so the caller keeps
// one reference, and none reads the DOM again while a frame is drawn.

export const byId = (id) => {
  const element = document.getElementById(id);
  if (!element) throw new Error(`the page has no #${id}`);
  return element;
};

/** Fills a <select> with `names` and selects `current`. */
export function fillSelect(select, names, current) {
  select.replaceChildren(...names.map((name) => new Option(name, name, false, name === current)));
}

/** Calls `onChange(value)` with the number in an <input> when it is committed and valid. */
export function onNumber(input, onChange) {
  input.addEventListener('change', () => {
    const value = Number(input.value);
    if (input.value !== '' && Number.isFinite(value)) onChange(value);
  });
}

/** A play/pause toggle: `onToggle(playing)`. */
export function playButton(button, onToggle) {
  let playing = false;
  const set = (value) => {
    playing = value;
    button.textContent = playing ? 'Pause' : 'Play';
    button.setAttribute('aria-pressed', String(playing));
    onToggle(playing);
  };
  button.addEventListener('click', () => set(!playing));
  return { get playing() { return playing; }, set };
}

/** Shows a message in the error line for a few seconds. */
export function showError(element, text) {
  element.textContent = text;
  element.hidden = false;
  clearTimeout(element.hideTimer);
  element.hideTimer = setTimeout(() => { element.hidden = true; }, 6000);
}

/** Text content, written only when it changed (writes force style work). */
export function setText(element, text) {
  if (element.textContent !== text) element.textContent = text;
}
