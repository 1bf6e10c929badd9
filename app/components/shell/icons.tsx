// Small inline icons (no icon font, no external requests). Decorative only.
const paths = {
  audio: "M12 3a3 3 0 0 0-3 3v6a3 3 0 0 0 6 0V6a3 3 0 0 0-3-3Zm-7 9a7 7 0 0 0 14 0M12 19v3",
  transcriptions: "M5 4h14v16H5zM8 8h8M8 12h8M8 16h5",
  arztbriefe: "M6 3h9l4 4v14H6zM14 3v5h5M9 13h7M9 17h7",
  chat: "M4 5h16v11H8l-4 4z",
  settings:
    "M12 9a3 3 0 1 0 0 6 3 3 0 0 0 0-6Zm8 3-2-.6-.6-1.5 1-1.8-1.5-1.5-1.8 1-1.5-.6L13 4h-2l-.6 2-1.5.6-1.8-1-1.5 1.5 1 1.8-.6 1.5L4 12v2l2 .6.6 1.5-1 1.8 1.5 1.5 1.8-1 1.5.6.6 2h2l.6-2 1.5-.6 1.8 1 1.5-1.5-1-1.8.6-1.5 2-.6z",
  help: "M12 21a9 9 0 1 0 0-18 9 9 0 0 0 0 18Zm-2.5-11.5a2.5 2.5 0 1 1 3.5 2.3c-.6.3-1 .8-1 1.5V14m0 3h.01",
  menu: "M4 6h16M4 12h16M4 18h16",
  logout: "M15 4h4v16h-4M10 8l-4 4 4 4M6 12h11",
  lock: "M7 11V8a5 5 0 0 1 10 0v3M5 11h14v10H5z",
} as const;

export type IconName = keyof typeof paths;

export function Icon({ name, className = "h-5 w-5" }: { name: IconName; className?: string }) {
  return <SvgIcon d={paths[name]} className={className} />;
}

/** One stroked 24×24 path; decorative, so hidden from assistive technology. */
export function SvgIcon({
  d,
  className = "h-5 w-5",
  ...rest
}: {
  d: string;
  className?: string;
  "data-icon"?: string;
}) {
  return (
    <svg
      viewBox="0 0 24 24"
      fill="none"
      stroke="currentColor"
      strokeWidth={1.8}
      strokeLinecap="round"
      strokeLinejoin="round"
      className={className}
      aria-hidden="true"
      {...rest}
    >
      <path d={d} />
    </svg>
  );
}
