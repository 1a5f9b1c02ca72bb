export { default, RunTracker, Registry } from "captaindata-poller/worker";
