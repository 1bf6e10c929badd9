// The layering of the server code (issue 23, docs/architecture.md), checked by `npm run lint`:
// routes → services → models; adapters never import use cases; only the start-up imports the job registry;
// no import cycles anywhere.
const ADAPTERS = "storage|media|pdf|antivirus|patient-records|speech|llm|model-store|dev-oidc|letter-export";
const USE_CASES = "recordings|transcription|letters|templates|chat|live|accounts|admin";

/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    {
      name: "no-circular",
      severity: "error",
      comment: "Two modules that import each other are one idea cut in two: merge them or move what they share.",
      from: {},
      to: { circular: true },
    },
    {
      name: "models-below-services",
      severity: "error",
      comment: "Models are plain queries: they never reach up into services or routes.",
      from: { path: "^app/models/" },
      to: { path: "^app/(services|routes)/" },
    },
    {
      name: "services-below-routes",
      severity: "error",
      comment: "Routes call services, never the other way round.",
      from: { path: "^app/(services|models)/", pathNot: "\\.test\\.tsx?$" },
      to: { path: "^app/routes/" },
    },
    {
      name: "adapters-below-use-cases",
      severity: "error",
      comment: "An adapter (storage, media, pdf, speech, llm, ...) serves the use cases and never imports one.",
      from: { path: `^app/services/(${ADAPTERS})/`, pathNot: "\\.test\\.tsx?$" },
      to: { path: `^app/services/(${USE_CASES})/` },
    },
    {
      name: "only-start-up-imports-the-job-registry",
      severity: "error",
      comment:
        "The registry imports every job runner; anything else importing it makes the request path depend on the worker.",
      from: { pathNot: "^(app/services/boot\\.server\\.ts|app/worker\\.server\\.ts|tests/)" },
      to: { path: "^app/services/jobs/registry\\.server\\.ts$" },
    },
    {
      name: "app-code-does-not-import-tests",
      severity: "error",
      comment: "Test helpers live under tests/support; only tests import them.",
      from: { path: "^(app|server)/", pathNot: "\\.test\\.tsx?$" },
      to: { path: "^tests/" },
    },
  ],
  options: {
    doNotFollow: { path: "node_modules" },
    exclude: { path: "^(node_modules|build|public/build)/" },
    tsConfig: { fileName: "tsconfig.json" },
    tsPreCompilationDeps: true,
    enhancedResolveOptions: { extensions: [".ts", ".tsx", ".js", ".mjs"] },
  },
};
