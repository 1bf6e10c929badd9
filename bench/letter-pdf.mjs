#!/usr/bin/env node
// The DIN 5008 PDF writer (issue 25, app/services/letter-export/letter-pdf.server.ts): how long it takes and how much
// memory it needs to write a 3-page Arztbrief (goal ≤ 300 ms). The writer is bundled with esbuild as the server build
// leaves it (scripts/bundle-source.mjs: packages external), so the font is read from the font package through the
// same path the built server takes. After WARM_UP renders (the first parses the fonts), RUNS renders are timed one
// after the other; memory is the process's RSS and V8 heap before and after the timed renders, with a forced garbage
// collection when node runs with --expose-gc (the npm script passes it).
// Usage: npm run bench:letter-pdf [-- --runs 30 --out letter.pdf]   (--out keeps the last PDF, e.g. for pdftoppm)
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { parseArgs } from "node:util";

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const WARM_UP = 5;
const GOAL_MS = 300;

const { values: opts } = parseArgs({
  options: { runs: { type: "string", default: "30" }, out: { type: "string" } },
});
const RUNS = Number(opts.runs);

async function loadWriter(dir) {
  const { bundleForNode } = await import("../scripts/bundle-source.mjs");
  const entry = path.join(dir, "entry.ts");
  const writer = JSON.stringify(path.join(ROOT, "app/services/letter-export/letter-pdf.server.ts"));
  fs.writeFileSync(entry, `export { writeLetterPdf } from ${writer};\n`);
  return import(pathToFileURL(await bundleForNode(entry, path.join(dir, "letter-pdf.mjs"))).href);
}

const SENTENCES = [
  "Der Patient stellte sich am 27.11.2026 mit seit drei Tagen bestehenden, belastungsabhängigen Schmerzen hinter dem Brustbein vor.",
  "Übelkeit, Fieber und Gewichtsverlust wurden verneint; die Beschwerden bessern sich in Ruhe binnen weniger Minuten.",
  "Vorerkrankungen: arterielle Hypertonie seit 2015, Hypercholesterinämie, Z. n. Appendektomie 1984.",
  "Aktuelle Medikation: Ramipril 5 mg 1-0-0, Atorvastatin 20 mg 0-0-1, bei Bedarf Pantoprazol 20 mg.",
  "Körperliche Untersuchung: RR 148/92 mmHg, Puls 84/min, rhythmisch; Herz und Lunge auskultatorisch unauffällig.",
  "Im Ruhe-EKG Sinusrhythmus, Linkstyp, keine Erregungsrückbildungsstörungen; Troponin „negativ“ (< 5 ng/l).",
  "Wir bitten um zeitnahe ergometrische Abklärung und ggf. Koronarangiographie – die Kosten von 0 € trägt die Kasse.",
  "Die Ehefrau, Frau Grüßner-Weiß, begleitet den Patienten und ist über das weitere Vorgehen informiert.",
];
const TITLES = [
  "Anamnese",
  "Vorerkrankungen",
  "Medikation",
  "Befund",
  "EKG",
  "Labor",
  "Beurteilung",
  "Procedere",
  "Empfehlung",
  "Hinweise für den Patienten",
];

/** A letter of ten sections of six sentences each, which the writer sets on three pages. */
function threePageLetter() {
  return {
    language: "de-DE",
    letterhead: {
      practiceName: "Hausarztpraxis am Marktplatz",
      doctors: [
        "Dr. med. Anna Weber, Fachärztin für Allgemeinmedizin",
        "Dr. med. Jörg Maaß, Facharzt für Innere Medizin",
      ],
      street: "Marktstraße 1",
      postalCode: "12345",
      city: "Musterstadt",
      phone: "0123 45678-0",
      email: "praxis@hausarzt-markt.example",
      bsnr: "123456789",
      lanr: "987654321",
      logo: null,
      closing: "Mit freundlichen Grüßen",
      signature: ["Dr. med. Anna Weber", "Fachärztin für Allgemeinmedizin"],
    },
    recipient: {
      name: "Herrn Dr. med. Peter Braun",
      addressLines: ["Kardiologische Praxis", "Lindenweg 2", "12345 Musterstadt"],
    },
    patient: { name: "Jürgen Weiß", birthDate: "1950-02-01" },
    subject: "Arztbrief: Überweisung zur kardiologischen Abklärung",
    date: "2026-11-27",
    sections: TITLES.map((title, i) => ({
      title,
      text: Array.from({ length: 6 }, (_, j) => SENTENCES[(i + j) % SENTENCES.length]).join(" "),
    })),
    labels: {
      page: (page, pages) => `Seite ${page} von ${pages}`,
      patient: "Patient",
      born: "geb.",
      date: "Datum",
      phone: "Tel.",
      email: "E-Mail",
      bsnr: "BSNR",
      lanr: "LANR",
    },
  };
}

function percentile(sorted, p) {
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)];
}

const mib = (bytes) => `${(bytes / 1024 / 1024).toFixed(1)} MiB`;

const dir = fs.mkdtempSync(path.join(os.tmpdir(), "skribent-bench-letter-pdf-"));
try {
  const { writeLetterPdf } = await loadWriter(dir);
  const letter = threePageLetter();
  const coldStart = performance.now();
  let pdf = await writeLetterPdf(letter);
  const cold = performance.now() - coldStart;
  const pages = (
    Buffer.from(pdf)
      .toString("latin1")
      .match(/\/Type \/Page\b/g) ?? []
  ).length;
  for (let i = 1; i < WARM_UP; i++) await writeLetterPdf(letter);

  globalThis.gc?.();
  const before = process.memoryUsage();
  let peakRss = before.rss;
  const times = [];
  for (let i = 0; i < RUNS; i++) {
    const started = performance.now();
    pdf = await writeLetterPdf(letter);
    times.push(performance.now() - started);
    peakRss = Math.max(peakRss, process.memoryUsage().rss);
  }
  globalThis.gc?.();
  const after = process.memoryUsage();
  times.sort((a, b) => a - b);
  const median = percentile(times, 50);

  console.log(
    `letter: ${pages} pages, ${letter.sections.length} sections, PDF ${(pdf.byteLength / 1024).toFixed(1)} KiB`,
  );
  console.log(`renders: ${RUNS} after ${WARM_UP} warm-up, one after the other, node ${process.version}`);
  console.log(`first render (reads and parses the fonts): ${cold.toFixed(1)} ms`);
  console.log(
    `time per 3-page letter: median ${median.toFixed(1)} ms, p95 ${percentile(times, 95).toFixed(1)} ms, max ${times.at(-1).toFixed(1)} ms (goal ≤ ${GOAL_MS} ms)`,
  );
  console.log(
    `memory: RSS ${mib(after.rss)} (peak ${mib(peakRss)}, +${mib(peakRss - before.rss)} over the runs), heap used ${mib(before.heapUsed)} → ${mib(after.heapUsed)}${globalThis.gc ? " after gc" : " (no --expose-gc)"}`,
  );
  if (pages !== 3) console.log(`note: the letter came out with ${pages} pages, not 3`);
  if (opts.out) {
    fs.writeFileSync(opts.out, pdf);
    console.log(`written: ${opts.out}`);
  }
  if (median > GOAL_MS) process.exitCode = 1;
} finally {
  fs.rmSync(dir, { recursive: true, force: true });
}
