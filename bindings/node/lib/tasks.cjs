'use strict';
// Tasks (the 2025-11-25 experimental tasks and the 2026-07-28 `io.modelcontextprotocol/tasks`
// extension, SEP-2663) as the client sees them. Core speaks the protocol; this is the JS shape
// of what it read.

const TERMINAL = new Set(['completed', 'failed', 'cancelled']);

/** One task as the server described it; `raw` is the object as sent (either era). */
class Task {
  constructor(raw) {
    this.raw = raw;
    this.taskId = raw.taskId;
    this.status = raw.status;
    this.statusMessage = raw.statusMessage ?? null;
    this.pollIntervalMs = raw.pollIntervalMs ?? raw.pollInterval ?? null;
    this.ttlMs = raw.ttlMs ?? raw.ttl ?? null;
    this.inputRequests = raw.inputRequests ?? null;
    this.result = raw.result ?? null;
    this.error = raw.error ?? null;
  }

  /** True once the task ended (completed, failed or cancelled). */
  get terminal() {
    return TERMINAL.has(this.status);
  }
}

module.exports = { Task };
