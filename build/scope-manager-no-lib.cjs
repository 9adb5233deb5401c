// Bundled in place of @typescript-eslint/scope-manager's lib/index.js: 242 definitions of
// TypeScript's lib globals that tacit never uses (the validator calls analyze() with lib: []
// so every global stays a free reference it can check). Loading them cost ~40 ms per run.
// Asking for a lib by name now fails loudly ("Invalid value for lib provided").
exports.lib = new Map();
