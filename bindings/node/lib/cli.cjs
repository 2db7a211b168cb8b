#!/usr/bin/env node
'use strict';
// `npx mcpcore` (the package's `bin`): the mcpcore command line, run by core's own entry point
// (the same as the `mcpcore` binary and `python -m mcpcore`). `mcpcore --help` lists the commands.
const native = require('./native.cjs');

process.exit(native.runCli(['mcpcore', ...process.argv.slice(2)]));
