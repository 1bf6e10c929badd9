import { json, type LoaderFunctionArgs } from "@remix-run/node";
import { Outlet, useLoaderData, useMatches } from "@remix-run/react";
import { BottomBar, Sidebar } from "~/components/shell/navigation";
import { ToastMessage } from "~/components/shell/toast";
import { TopBar } from "~/components/shell/top-bar";
import type { RouteHandle } from "~/components/page-scripts";
import { getSectionCounts } from "~/models/workspace.server";
import { getConfig } from "~/services/config/config.server";
import { getLanguage } from "~/services/web/i18n.server";
import { requireUser } from "~/services/web/session.server";
import { readToast } from "~/services/web/toast.server";
import { rethrowAsUnavailable } from "~/services/web/unavailable.server";

// The signed-in workspace shell of SPEC §2 "Navigation and shell".
export const handle: RouteHandle = { i18n: ["common"], scripts: ["shell"] };

export async function loader({ request }: LoaderFunctionArgs) {
  const user = await requireUser(request);
  // The shell's error decides the page's (it is the first loader): a database gone mid-request is a 503 too.
  const [counts, language, { toast, setCookie }] = await Promise.all([
    getSectionCounts({ ownerId: user.id }),
    getLanguage(request),
    readToast(request),
  ]).catch(rethrowAsUnavailable);
  return json(
    {
      user: { name: user.name, email: user.email },
      counts,
      language,
      links: getConfig().links,
      toast,
    },
    { headers: setCookie ? { "Set-Cookie": setCookie } : undefined },
  );
}

export default function Workspace() {
  const { user, counts, language, links, toast } = useLoaderData<typeof loader>();
  // A modal route that shows the toast in its dialog (the letter editor): not twice.
  const toastInDialog = useMatches().some((m) => (m.handle as RouteHandle | undefined)?.ownsToast);
  return (
    <div className="flex min-h-screen flex-col">
      <TopBar user={user} language={language} links={links} />
      <div className="flex flex-1">
        <Sidebar counts={counts} />
        <main id="main" className="min-w-0 flex-1 px-4 pt-6 pb-24 md:px-8 md:pb-10">
          {toastInDialog ? null : <ToastMessage toast={toast} />}
          <Outlet />
        </main>
      </div>
      <BottomBar />
    </div>
  );
}
