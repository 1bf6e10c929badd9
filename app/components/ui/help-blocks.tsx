import { Icon, SvgIcon, type IconName } from "~/components/shell/icons";

// Presentational pieces of the help page (SPEC §2 "Help and Information").
// They receive translated strings only; no data access, no client state.

// Action icons the shell's set does not have. Decorative: the label is always shown beside them.
const actionPaths = {
  play: "M8 5v14l11-7z",
  trash: "M4 7h16M10 11v6M14 11v6M6 7l1 13h10l1-13M9 7V4h6v3",
  refresh: "M20 5v5h-5M4 19v-5h5M18.4 9A7 7 0 0 0 5.6 7.6L4 10m16 4-1.6 2.4A7 7 0 0 1 5.6 15",
  sparkle:
    "M12 3l1.8 5.2L19 10l-5.2 1.8L12 17l-1.8-5.2L5 10l5.2-1.8zM19 15l.8 2.2L22 18l-2.2.8L19 21l-.8-2.2L16 18l2.2-.8z",
  eye: "M2 12s3.6-7 10-7 10 7 10 7-3.6 7-10 7S2 12 2 12Zm10-3a3 3 0 1 0 0 6 3 3 0 0 0 0-6Z",
  redo: "M15 4l4 4-4 4M19 8H9a5 5 0 0 0 0 10h4",
  pencil: "M4 20h4L19 9l-4-4L4 16zM13.5 6.5l4 4",
  upload: "M12 16V4M7 9l5-5 5 5M4 20h16",
} as const;

export type HelpIconName = IconName | keyof typeof actionPaths;

function isActionIcon(name: HelpIconName): name is keyof typeof actionPaths {
  return name in actionPaths;
}

export function HelpIcon({ name, className = "h-5 w-5" }: { name: HelpIconName; className?: string }) {
  if (!isActionIcon(name)) return <Icon name={name} className={className} />;
  return <SvgIcon d={actionPaths[name]} className={className} data-icon={name} />;
}

/** One of the page's blocks: a white card with an h2 that the table of contents links to. */
export function HelpBlock({
  id,
  title,
  intro,
  children,
}: {
  id: string;
  title: string;
  intro?: string;
  children: React.ReactNode;
}) {
  return (
    <section
      id={id}
      aria-labelledby={`${id}-title`}
      className="scroll-mt-20 rounded-lg border border-slate-200 bg-white p-5 md:p-6"
    >
      <h2 id={`${id}-title`} className="text-lg font-semibold tracking-tight">
        {title}
      </h2>
      {intro ? <p className="mt-1 text-sm text-slate-600">{intro}</p> : null}
      <div className="mt-4">{children}</div>
    </section>
  );
}

/** An h3 with an icon badge, used for sub-blocks (sections, lists, features). */
export function HelpSubheading({ icon, children }: { icon?: HelpIconName; children: React.ReactNode }) {
  return (
    <h3 className="flex items-center gap-2 text-base font-semibold text-slate-900">
      {icon ? (
        <span className="flex h-8 w-8 shrink-0 items-center justify-center rounded-md bg-brand-50 text-brand-700">
          <HelpIcon name={icon} className="h-4 w-4" />
        </span>
      ) : null}
      {children}
    </h3>
  );
}

export function BulletList({ items }: { items: string[] }) {
  return (
    <ul className="mt-3 list-disc space-y-1.5 pl-5 text-sm text-slate-700 marker:text-brand-600">
      {items.map((item) => (
        <li key={item}>{item}</li>
      ))}
    </ul>
  );
}

/** A status label as it appears in the lists, with what it means. */
export function StatusList({ title, items }: { title: string; items: Array<{ label: string; meaning: string }> }) {
  return (
    <div className="mt-4">
      <h4 className="text-sm font-medium text-slate-900">{title}</h4>
      <dl className="mt-2 space-y-2 text-sm">
        {items.map(({ label, meaning }) => (
          <div key={label} className="flex flex-col gap-1 sm:flex-row sm:gap-3">
            <dt className="shrink-0 sm:w-56">
              <span className="inline-block rounded-full bg-slate-100 px-2 py-0.5 text-xs font-medium text-slate-700">
                {label}
              </span>
            </dt>
            <dd className="text-slate-700">{meaning}</dd>
          </div>
        ))}
      </dl>
    </div>
  );
}

/** The actions of one list: icon, visible label, meaning. */
export function IconList({ items }: { items: Array<{ icon: HelpIconName; label: string; meaning: string }> }) {
  return (
    <dl className="mt-3 divide-y divide-slate-100 text-sm">
      {items.map(({ icon, label, meaning }) => (
        <div key={label} className="py-2.5">
          <dt className="flex items-center gap-3 font-medium text-slate-900">
            <span className="flex h-8 w-8 shrink-0 items-center justify-center rounded-md border border-slate-200 text-slate-700">
              <HelpIcon name={icon} className="h-4 w-4" />
            </span>
            {label}
          </dt>
          <dd className="mt-0.5 pl-11 text-slate-600">{meaning}</dd>
        </div>
      ))}
    </dl>
  );
}
