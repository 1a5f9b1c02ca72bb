// Mounts the README's component as a Next.js page would: hydrated over the server's HTML when
// the test rendered it (renderToString), in StrictMode. ?job= picks the run.
import { StrictMode } from "react";
import { createRoot, hydrateRoot } from "react-dom/client";
import { Leads } from "./Leads";

const jobUid = new URLSearchParams(location.search).get("job") ?? "";
const root = document.getElementById("root");
if (root === null) throw new Error("no #root");
const app = (
  <StrictMode>
    <Leads jobUid={jobUid} />
  </StrictMode>
);
if (root.hasChildNodes() && root.firstChild?.nodeType === Node.ELEMENT_NODE) hydrateRoot(root, app);
else createRoot(root).render(app);
