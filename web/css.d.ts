// CSS imports are bundled by esbuild (scripts/build-web.mjs); they export nothing.
declare module '*.css';
