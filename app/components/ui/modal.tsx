import { Link } from "@remix-run/react";

/**
 * A dialog rendered on the server as a nested route over its parent page
 * (ARCHITECTURE.md: no JavaScript); closing is a link back to the parent.
 */
export function Modal({
  title,
  closeTo,
  closeLabel,
  children,
  wide = false,
}: {
  title: string;
  closeTo: string;
  closeLabel: string;
  children: React.ReactNode;
  wide?: boolean;
}) {
  return (
    <div
      className="fixed inset-0 z-40 flex items-start justify-center overflow-y-auto bg-slate-900/40 px-4 py-10"
      data-modal
    >
      <section
        role="dialog"
        aria-modal="true"
        aria-labelledby="modal-title"
        className={`w-full ${wide ? "max-w-4xl" : "max-w-lg"} rounded-xl bg-white p-6 shadow-xl`}
      >
        <header className="mb-4 flex items-start gap-4">
          <h2 id="modal-title" className="flex-1 text-xl font-semibold">
            {title}
          </h2>
          <Link
            to={closeTo}
            className="-m-1 rounded p-1 text-slate-500 hover:bg-slate-100"
            aria-label={closeLabel}
            title={closeLabel}
          >
            <span aria-hidden="true">×</span>
          </Link>
        </header>
        {children}
      </section>
    </div>
  );
}
