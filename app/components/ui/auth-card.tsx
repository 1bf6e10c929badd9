/** The centred card of the sign-in, waiting and verification screens. */
export function AuthCard({ title, children }: { title: string; children: React.ReactNode }) {
  return (
    <main className="flex min-h-screen items-center justify-center px-4">
      <div className="w-full max-w-md rounded-xl border border-slate-200 bg-white p-8 shadow-sm">
        <div className="mb-6 flex items-center gap-2 font-semibold text-brand-700">
          <img src="/favicon.svg" alt="" className="h-8 w-8" />
          Skribent
        </div>
        <h1 className="text-xl font-semibold">{title}</h1>
        <div className="mt-4 space-y-4 text-sm text-slate-700">{children}</div>
      </div>
    </main>
  );
}

export function Spinner() {
  return (
    <span
      aria-hidden="true"
      className="inline-block h-4 w-4 animate-spin rounded-full border-2 border-brand-600 border-t-transparent align-[-2px]"
    />
  );
}

export const primaryButton =
  "inline-flex items-center justify-center rounded-md bg-brand-600 px-4 py-2 text-sm font-medium text-white hover:bg-brand-700";
