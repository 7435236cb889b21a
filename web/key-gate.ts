import { ApiError, whoami, type Caller } from './api-client.ts';
import { forgetKey, storedKey, storeKey } from './browser-key.ts';

/**
 * Resolves with an accepted key and its caller: the one kept in this tab if the API still takes
 * it, else the one typed into the form drawn in `root` (checked with GET /v1/whoami first).
 */
export async function keyGate(root: HTMLElement, purpose: string): Promise<{ key: string; caller: Caller }> {
  const kept = storedKey();
  if (kept) {
    try {
      return { key: kept, caller: await whoami(kept) };
    } catch (err) {
      if (!(err instanceof ApiError && err.status === 401)) throw err;
      forgetKey();
    }
  }
  return new Promise((resolve) => {
    root.replaceChildren();
    const form = document.createElement('form');
    form.className = 'key-gate';
    form.innerHTML = `<h2>API key</h2>
      <p></p>
      <label>API key <input type="password" name="apikey" autocomplete="off" spellcheck="false" required size="50"></label>
      <button type="submit">Continue</button>
      <p class="error" role="alert"></p>
      <p class="hint">The key is kept only in this browser tab (sessionStorage) and sent only in the <code>apikey</code> header
      to this server. Keys are made with <code>npx placedata keys create &lt;name&gt;</code>.</p>`;
    form.querySelector('p')!.textContent = purpose;
    const input = form.querySelector('input')!;
    const error = form.querySelector<HTMLElement>('.error')!;
    form.addEventListener('submit', (e) => {
      e.preventDefault();
      const key = input.value.trim();
      error.textContent = '';
      whoami(key).then((caller) => {
        storeKey(key);
        form.remove();
        resolve({ key, caller });
      }, (err: unknown) => {
        error.textContent = err instanceof ApiError ? `${err.message} (${err.code})` : 'The server cannot be reached';
      });
    });
    root.append(form);
    input.focus();
  });
}

/** The bar at the top of each page: the pages, who the key belongs to, and a way to forget it. */
export function navBar(active: 'explorer' | 'status', caller: Caller | null): HTMLElement {
  const nav = document.createElement('nav');
  nav.className = 'top';
  nav.innerHTML = `<strong>placedata</strong>
    <a href="/" ${active === 'explorer' ? 'aria-current="page"' : ''}>Explorer</a>
    <a href="/status" ${active === 'status' ? 'aria-current="page"' : ''}>Status</a>
    <span class="spacer"></span><span class="who"></span>`;
  if (caller) {
    nav.querySelector('.who')!.textContent = `key "${caller.name}" (${caller.role})`;
    const forget = document.createElement('button');
    forget.type = 'button';
    forget.textContent = 'Forget key';
    forget.addEventListener('click', () => {
      forgetKey();
      location.reload();
    });
    nav.append(forget);
  }
  return nav;
}
