// The areas layout's boundaries (docs/areas.md), checked in `npm test` by `npm run check:boundaries`.
/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    {
      name: 'core-imports-no-area',
      comment: 'src/core is infrastructure: it imports no area and no transport.',
      severity: 'error',
      from: { path: '^src/core/' },
      to: { path: '^src/(areas|http)/' },
    },
    {
      name: 'area-through-index',
      comment: "An area uses another only through that area's index.ts.",
      severity: 'error',
      from: { path: '^src/areas/([^/]+)/' },
      to: { path: '^src/areas/[^/]+/', pathNot: ['^src/areas/$1/', '^src/areas/[^/]+/index\\.ts$'] },
    },
    {
      name: 'outside-through-index',
      comment: 'Transports, the CLI, the SDK and the process entry reach an area only through its index.ts.',
      severity: 'error',
      from: { path: '^src/', pathNot: '^src/areas/' },
      to: { path: '^src/areas/[^/]+/', pathNot: '^src/areas/[^/]+/index\\.ts$' },
    },
    {
      name: 'no-cycles',
      comment:
        'No import cycles, type-only imports included: they vanish at run time, but a type cycle still ties ' +
        'the files together for a reader and for the type checker.',
      severity: 'error',
      from: { path: '^src/' },
      to: { circular: true },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    exclude: { path: '\\.test\\.ts$' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
  },
};
