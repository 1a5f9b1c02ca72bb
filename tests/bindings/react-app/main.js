// StrictMode, as every new Vite or Next app has it; hydrates when the page came server-rendered.
import { StrictMode, createElement as h } from "react";
import { createRoot, hydrateRoot } from "react-dom/client";
import { App } from "./app.js";

const root = document.getElementById("root");
const app = h(StrictMode, null, h(App, {}));
if (root.hasChildNodes()) hydrateRoot(root, app);
else createRoot(root).render(app);
