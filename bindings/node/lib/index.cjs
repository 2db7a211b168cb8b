'use strict';
// The public API of the `mcpcore` package (CommonJS); `index.js` is the ESM entry.
const { Server, Context, HttpHandle } = require('./server.cjs');
const { Client } = require('./client.cjs');
const { McpError, McpcoreError } = require('./errors.cjs');

module.exports = { Server, Context, HttpHandle, Client, McpError, McpcoreError };
