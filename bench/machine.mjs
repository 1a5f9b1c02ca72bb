// Where and with what the bench ran: the machine line the README quotes, and the shipped size.
import { execFileSync } from "node:child_process";
import os from "node:os";
import { measure } from "../scripts/size.mjs";

function rustc() {
  try {
    return execFileSync("rustc", ["--version"], { encoding: "utf8" }).trim();
  } catch {
    return null;
  }
}

export function machine() {
  const cpus = os.cpus();
  return {
    cpu: cpus[0]?.model?.trim() ?? "unknown",
    cores: cpus.length,
    memoryGB: Math.round(os.totalmem() / 2 ** 30),
    os: `${os.type()} ${os.release()} ${os.arch()}`,
    node: process.version,
    rustc: rustc(),
  };
}

/** What a page downloads, gzipped: wasm, JS, and the total in brotli (scripts/size.mjs), or the reason it could not be measured. */
export async function shippedSize() {
  try {
    const m = await measure();
    return {
      wasmGzip: m.wasm.gzip,
      jsGzip: m.js.gzip,
      totalGzip: m.total,
      totalBrotli: m.totalBrotli,
      wasmRaw: m.wasm.raw,
      target: m.target,
      limit: m.limit,
    };
  } catch (error) {
    return { error: String(error?.message ?? error) };
  }
}
