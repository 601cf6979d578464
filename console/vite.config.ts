// The app is served by `inmanta server` under /console (index.html is the fallback for unknown paths there).
import { defineConfig } from "vite";

export default defineConfig({
  base: "/console/",
  esbuild: { jsx: "automatic", jsxImportSource: "preact" },
  build: { outDir: "dist", emptyOutDir: true, chunkSizeWarningLimit: 1200 },
});
