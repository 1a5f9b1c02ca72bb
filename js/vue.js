// `captaindata-poller/vue`: useJobPoller(options | ref | getter), a thin adapter over
// poller-store.js. Each field of the snapshot is a shallowRef; the poller starts when the
// component is mounted (never in a server render) and stops when its effect scope is disposed.
// `state` holds the whole snapshot, whose `status` narrows its other fields in TypeScript.
import { getCurrentInstance, onMounted, onScopeDispose, shallowRef, toValue, triggerRef, watch } from "vue";
import { IDLE, getSnapshot, pollerKey, subscribe } from "./poller-store.js";

const FIELDS = Object.keys(IDLE).filter((name) => typeof IDLE[name] !== "function");

export function useJobPoller(options) {
  const state = Object.fromEntries(FIELDS.map((name) => [name, shallowRef(IDLE[name])]));
  const whole = shallowRef(IDLE);
  const ref = { current: toValue(options) }; // the latest options: their callbacks are called
  let key; // undefined until the first follow()
  let snapshot = IDLE;
  let unsubscribe = () => {};
  const show = () => {
    const next = getSnapshot(key ?? null);
    if (next === snapshot) return;
    for (const name of FIELDS) state[name].value = next[name];
    // `rows` is the same array, longer: a shallowRef does not see that by itself.
    if (next.rows === snapshot.rows && next.rowCount !== snapshot.rowCount) triggerRef(state.rows);
    whole.value = next;
    snapshot = next;
  };
  const follow = () => {
    const next = pollerKey(ref.current);
    if (next === key) return; // equal values: the same poller
    unsubscribe();
    key = next;
    unsubscribe = subscribe(key, ref, show);
    show();
  };
  // Outside a component (a plain effectScope) there is no mount: start at once.
  let mounted = !getCurrentInstance();
  watch(() => toValue(options), (value) => {
    ref.current = value;
    if (mounted) follow();
  });
  if (mounted) follow();
  else onMounted(() => { mounted = true; follow(); });
  onScopeDispose(() => unsubscribe());
  return { ...state, state: whole, stop: () => snapshot.stop(), resume: () => snapshot.resume() };
}
