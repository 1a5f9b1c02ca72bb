export CAPTAINDATA_API_KEY=… CAPTAINDATA_PROJECT_ID=…
npx captaindata-poller watch <jobUid> --out rows.ndjson --state rows.state.json
npx captaindata-poller run <workflowUid> --inputs profiles.csv --format csv > leads.csv
npx captaindata-poller status <jobUid> --json
