// What happened: every step with its time, every request with the instance that answered it; what fails the proof
// (ProofError, check), and the summary with the last line.

export const started = Date.now();
const clock = () => `+${((Date.now() - started) / 1000).toFixed(1).padStart(5)}s`;

export class ProofError extends Error {}
export function check(condition, message) {
  if (!condition) throw new ProofError(message);
}

const steps = [];
export const caveats = [];
export const stops = []; // what the workflow went through, for the last line
export let current;
export function step(name) {
  current = { name, at: Date.now(), served: { A: 0, B: 0 }, requests: 0 };
  steps.push(current);
  console.log(`\n${clock()}  ${steps.length}. ${name}`);
}
export function note(text) {
  console.log(`${clock()}     ${text}`);
}
export function endStep() {
  current.ms = Date.now() - current.at;
}

/** The table of steps, and PROVEN when both instances served the workflow (past the start and the alternation). */
export function summarise() {
  const total = { A: 0, B: 0 };
  console.log("\nSummary (requests answered per instance; nginx's access log for the live sockets):");
  for (const s of steps) {
    total.A += s.served.A;
    total.B += s.served.B;
    console.log(
      `  ${s.name.slice(0, 78).padEnd(78)} ${((s.ms ?? 0) / 1000).toFixed(1).padStart(5)} s   A ${String(s.served.A).padStart(3)}  B ${String(s.served.B).padStart(3)}`,
    );
  }
  check(total.A > 0 && total.B > 0, "one instance served nothing");
  const workflow = steps.slice(2);
  check(
    workflow.filter((s) => s.served.A > 0).length >= 3 && workflow.filter((s) => s.served.B > 0).length >= 3,
    "the workflow's steps were not shared between the instances",
  );
  for (const caveat of caveats) console.log(`\nCAVEAT ${caveat}`);
  console.log(
    `\nPROVEN in ${((Date.now() - started) / 1000).toFixed(1)} s: A answered ${total.A} requests, B ${total.B}; ` +
      `stopped: ${stops.join(", ")}; nothing lost.`,
  );
}
