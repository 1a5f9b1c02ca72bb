// The README's Vue component rendered on a server, as Nuxt renders a page.
import { createSSRApp, h } from "vue";
import { renderToString } from "vue/server-renderer";
import Leads from "./Leads.vue";

export const render = (jobUid) => renderToString(createSSRApp({ render: () => h(Leads, { jobUid }) }));
