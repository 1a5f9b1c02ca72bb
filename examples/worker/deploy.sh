npm install captaindata-poller wrangler@4.86.0
npx wrangler deploy --dry-run --outdir dist
npx wrangler secret put CAPTAINDATA_API_KEY
npx wrangler secret put CAPTAINDATA_PROJECT_ID
npx wrangler secret put WEBHOOK_SECRET
npx wrangler secret put READ_TOKEN_SECRET
npx wrangler secret put ADMIN_TOKEN
npx wrangler deploy
