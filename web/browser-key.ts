/**
 * The API key lives only in this browser tab: sessionStorage, not localStorage, so it is gone
 * when the tab closes (a shared machine keeps nothing) and no other site or tab of ours can read
 * it later. It goes to the server only in the `apikey` header of our own API calls.
 */
const STORAGE_KEY = 'placedata.apikey';

export function storedKey(): string | null {
  return sessionStorage.getItem(STORAGE_KEY);
}

export function storeKey(key: string): void {
  sessionStorage.setItem(STORAGE_KEY, key);
}

export function forgetKey(): void {
  sessionStorage.removeItem(STORAGE_KEY);
}
