import js from "@eslint/js";
import globals from "globals";
import react from "eslint-plugin-react";
import reactHooks from "eslint-plugin-react-hooks";
import tseslint from "typescript-eslint";

export default tseslint.config(
  {
    ignores: [
      "build/**",
      "public/build/**",
      "public/pe/**",
      "public/live/**",
      "data/**",
      "node_modules/**",
      "test-results/**",
      "playwright-report/**",
    ],
  },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    files: ["**/*.{ts,tsx}"],
    plugins: { react, "react-hooks": reactHooks },
    settings: { react: { version: "detect" } },
    rules: {
      ...react.configs.recommended.rules,
      ...react.configs["jsx-runtime"].rules,
      ...reactHooks.configs.recommended.rules,
      "react/prop-types": "off",
      "@typescript-eslint/no-explicit-any": "error",
      "@typescript-eslint/no-unused-vars": ["error", { argsIgnorePattern: "^_", varsIgnorePattern: "^_" }],
    },
  },
  {
    files: ["app/pe/**/*.js"],
    languageOptions: {
      sourceType: "script",
      globals: {
        window: "readonly",
        document: "readonly",
        localStorage: "readonly",
        fetch: "readonly",
        XMLHttpRequest: "readonly",
        FormData: "readonly",
        setTimeout: "readonly",
        clearTimeout: "readonly",
        Event: "readonly",
        AbortController: "readonly",
        DOMParser: "readonly",
        navigator: "readonly",
      },
    },
  },
  {
    // A page script grown into pieces: the entry and its subfolder are ES modules that scripts/build-pe.mjs
    // bundles into one classic script.
    files: ["app/pe/upload.js", "app/pe/*/**/*.js"],
    languageOptions: { sourceType: "module" },
  },
  {
    files: ["scripts/**/*.mjs", "bench/**/*.mjs", "*.config.js", "server/*.mjs", "tests/support/*.mjs"],
    languageOptions: { globals: globals.node },
  },
  {
    // dependency-cruiser reads its configuration as CommonJS.
    files: [".dependency-cruiser.cjs"],
    languageOptions: { sourceType: "commonjs", globals: globals.node },
  },
);
