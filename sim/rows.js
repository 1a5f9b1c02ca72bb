// Result rows shaped like a Captain Data LinkedIn extraction, deterministic from
// (jobUid, index) so a row read twice, or by two pollers, is identical.
import { hashString, seededRandom } from "./random.js";

const FIRST = ["Alice", "Bruno", "Chloé", "Dmitri", "Emma", "Farid", "Grace", "Hugo", "Inès", "Jonas", "Karin", "Léo"];
const LAST = ["Martin", "Bernard", "Dubois", "Nguyen", "Schmidt", "Rossi", "Garcia", "Kowalski", "Haddad", "Smith"];
const TITLES = [
  "Head of Growth",
  "Sales Director",
  "CTO",
  "Account Executive",
  "Product Manager",
  "Founder & CEO",
  "Data Engineer",
];
const COMPANIES = [
  "Acme Robotics",
  "Nimbus Analytics",
  "Bluefin Labs",
  "Orbital Foods",
  "Quartz Finance",
  "Helio Energy",
];
const CITIES = [
  "Paris, France",
  "Berlin, Germany",
  "London, UK",
  "Lisbon, Portugal",
  "New York, US",
  "Montréal, Canada",
];
const FILLER = "Experienced professional passionate about building teams, shipping products and growing revenue. ";

/**
 * One result row. `id` is stable (`row-<index>`); the row's JSON is padded to
 * about `rowBytes` bytes with a `summary` field.
 * @param {string} jobUid
 * @param {number} index 0-based position in the run's results
 * @param {number} [rowBytes=200]
 * @returns {Record<string, unknown>}
 */
export function makeRow(jobUid, index, rowBytes = 200) {
  const random = seededRandom(hashString(jobUid) ^ Math.imul(index + 1, 0x9e3779b1));
  const pick = (list) => list[Math.floor(random() * list.length)];
  const first = pick(FIRST);
  const last = pick(LAST);
  const company = pick(COMPANIES);
  const slug = `${first}-${last}-${index}`
    .toLowerCase()
    .normalize("NFD")
    .replace(/[^a-z0-9-]/g, "");
  const row = {
    id: `row-${index}`,
    index,
    full_name: `${first} ${last}`,
    job_title: pick(TITLES),
    company_name: company,
    linkedin_profile_url: `https://www.linkedin.com/in/${slug}`,
    location: pick(CITIES),
    summary: "",
  };
  const missing = rowBytes - JSON.stringify(row).length;
  if (missing > 0) row.summary = FILLER.repeat(Math.ceil(missing / FILLER.length)).slice(0, missing);
  return row;
}
