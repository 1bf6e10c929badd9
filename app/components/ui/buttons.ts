// The button looks of the workspace: the primary action, a quiet secondary one, and a destructive one.
export const button = "rounded-md bg-brand-600 px-4 py-2 text-sm font-medium text-white hover:bg-brand-700";
export const quiet = "rounded-md border border-slate-300 px-3 py-1.5 text-sm text-slate-700 hover:bg-slate-50";
export const danger = "rounded-md bg-red-600 px-4 py-2 text-sm font-medium text-white hover:bg-red-700";
