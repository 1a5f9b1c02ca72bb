npm start   # in another terminal: the demo and the simulated API on http://127.0.0.1:8080
echo '[{"linkedin_profile_url":"https://www.linkedin.com/in/ada"}]' | CAPTAINDATA_API_KEY=sim-key CAPTAINDATA_PROJECT_ID=sim-project npx captaindata-poller run demo --inputs - --base-url http://127.0.0.1:8080/v3 --interval 1s
