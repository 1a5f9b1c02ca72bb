import { mount } from "svelte";
import App from "./App.svelte";

const params = new URLSearchParams(location.search);
const target = document.getElementById("app");
if (target) mount(App, { target, props: { first: params.get("job") ?? "", next: params.get("next") ?? "" } });
