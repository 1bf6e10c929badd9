import type { Page } from "@playwright/test";
import { A11Y_ACCOUNT, seedRecording } from "./a11y-support";
import { expect, signIn, test } from "./support";

// Issue 9 "Accessibility", with JavaScript on and off (both projects run this file): on the main screens every
// visible, enabled control is reached by Tab, and each shows a focus indicator while it has keyboard focus.

/**
 * Tabs through the page: every visible, enabled control must be reached, and each must show a focus indicator
 * (an outline or a ring) while it has keyboard focus. Returns what fails, as readable lines.
 */
async function keyboardProblems(page: Page, path: string) {
  await page.goto(path);
  await page.waitForLoadState("load");
  const controls = await page.evaluate(() => {
    const selector = "a[href], button, input:not([type=hidden]), select, textarea, [tabindex]:not([tabindex='-1'])";
    const radioGroups = new Set<string>();
    return [...document.querySelectorAll<HTMLElement>(selector)]
      .filter((el) => !(el as HTMLButtonElement).disabled && el.getClientRects().length > 0)
      .filter((el) => getComputedStyle(el).visibility !== "hidden" && !el.closest("template, [inert]"))
      .filter((el) => {
        // Inside a closed <details> only its summary is a control; a radio group is one stop (arrows move in it).
        const details = el.closest("details");
        if (details && !details.open && !el.closest("summary")) return false;
        if (el instanceof HTMLInputElement && el.type === "radio") {
          if (radioGroups.has(el.name)) return false;
          radioGroups.add(el.name);
        }
        return true;
      })
      .map((el, i) => {
        el.dataset.a11yControl = String(i);
        if (el instanceof HTMLInputElement && el.type === "radio")
          document
            .querySelectorAll<HTMLElement>(`input[type=radio][name="${CSS.escape(el.name)}"]`)
            .forEach((radio) => (radio.dataset.a11yControl = String(i)));
        const label = el.textContent || el.getAttribute("aria-label") || el.getAttribute("name") || "";
        return `${el.tagName.toLowerCase()} "${label.trim().slice(0, 40)}"`;
      });
  });
  const reached = new Set<string>();
  const problems: string[] = [];
  let first: string | null = null;
  for (let stop = 0; stop < controls.length * 2 + 20; stop++) {
    await page.keyboard.press("Tab");
    const focus = await page.evaluate(() => {
      const el = document.activeElement as HTMLElement | null;
      if (!el || el === document.body) return null;
      const style = getComputedStyle(el);
      const indicated =
        (style.outlineStyle !== "none" && parseFloat(style.outlineWidth) > 0) || style.boxShadow !== "none";
      return { id: el.dataset.a11yControl ?? null, indicated, tag: el.tagName.toLowerCase() };
    });
    if (!focus) continue;
    // Back at the first control: the whole tab order has been walked.
    if (focus.id !== null && focus.id === first) break;
    first ??= focus.id;
    if (focus.id !== null) reached.add(focus.id);
    if (!focus.indicated) problems.push(`${path}: no visible focus on ${controls[Number(focus.id)] ?? focus.tag}`);
  }
  controls.forEach((control, i) => {
    if (!reached.has(String(i))) problems.push(`${path}: not reachable by Tab: ${control}`);
  });
  return problems;
}

test("every control of the main screens is reachable by keyboard and shows its focus", async ({ page }) => {
  test.setTimeout(120_000);
  await signIn(page, A11Y_ACCOUNT, "/");
  const { letterPath } = await seedRecording(page);
  const problems: string[] = [];
  for (const path of [
    "/",
    "/?tab=record",
    "/transcriptions",
    "/arztbriefe",
    letterPath,
    "/chat",
    "/settings",
    "/settings/sessions",
  ]) {
    problems.push(...(await keyboardProblems(page, path)));
  }
  expect(problems).toEqual([]);
});
