'use strict';
// napi's platform name of this process (`linux-x64-gnu`, `darwin-arm64`, `win32-x64-msvc`, …).

function abi() {
  if (process.platform === 'win32') return '-msvc';
  if (process.platform !== 'linux') return '';
  const report = typeof process.report?.getReport === 'function' ? process.report.getReport() : null;
  return report?.header?.glibcVersionRuntime ? '-gnu' : '-musl';
}

module.exports = { triple: `${process.platform}-${process.arch}${abi()}` };
