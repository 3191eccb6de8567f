// A hand-written documents corpus of bench/memory-quality.ts (written for this bench, issue 37): an
// employee handbook of a fictional company, stored one paragraph per memory (as documents are chunked),
// with neighbouring sections sharing their vocabulary (leave, expenses, travel, equipment, security all
// talk of managers, approvals, days and euros). Questions ask in an employee's words, not the
// handbook's: "time off to look after a newborn" for "parental leave", "the laptop" for "equipment".
// A paragraph is [key, text]; a question names the keys of the paragraphs that answer it.

export type HandbookQuestion = { q: string; keys: string[]; kind: string };

export const handbook: [string, string][] = [
  [
    'leave-annual',
    'Annual leave. Full-time staff accrue 26 working days of paid holiday per calendar year, pro rata for part-time contracts. Up to five unused days may be carried into the first quarter of the following year; anything beyond that lapses on 31 December.',
  ],
  [
    'leave-request',
    'Holiday requests are made in the HR portal at least two weeks ahead for absences longer than three days. Your line manager approves or declines within five working days; silence is not approval.',
  ],
  [
    'leave-sick',
    'Sickness absence. Tell your manager before 10:00 on the first day you are unwell. From the fourth consecutive calendar day a doctor’s certificate is required, uploaded to the HR portal.',
  ],
  [
    'leave-parental',
    'Parental leave. Birth parents receive 20 weeks at full pay; the second parent, including adoptive and same-sex partners, receives 8 weeks at full pay, to be taken within the first year after the child arrives.',
  ],
  [
    'leave-bereavement',
    'Compassionate leave of up to five paid days is granted on the death of a close family member; your manager may extend it. No documentation is needed.',
  ],
  [
    'leave-volunteer',
    'Each employee may spend two paid days a year volunteering for a registered charity. Book them as “volunteering” in the HR portal like any other absence.',
  ],
  [
    'leave-unpaid',
    'Sabbaticals. After four years of service you may request an unpaid sabbatical of one to three months. Requests go to the head of department at least three months in advance.',
  ],
  [
    'hours-core',
    'Working hours. Core hours are 10:00 to 16:00 Lisbon time, when everyone should be reachable; outside them, arrange your day as your team agrees.',
  ],
  [
    'hours-remote',
    'Remote work. Staff may work from home up to three days a week. Working from another country is allowed for up to 30 days a year and must be registered with HR beforehand for tax reasons.',
  ],
  [
    'hours-overtime',
    'Overtime is not paid for salaried staff; instead, hours worked at weekends at a manager’s request are given back as time off in lieu within the following month.',
  ],
  [
    'exp-general',
    'Expenses. Company money is spent as if it were your own. Every claim needs an itemised receipt and a business reason, and is submitted in the expenses app within 60 days.',
  ],
  [
    'exp-approval',
    'Claims up to 500 euros are approved by your line manager; above 500 euros the budget holder of your department must also approve; above 5,000 euros the finance director signs off.',
  ],
  [
    'exp-meals',
    'Meals while travelling are reimbursed up to 45 euros a day within Portugal and 70 euros a day abroad. Alcohol is never reimbursed, except at client dinners approved in advance.',
  ],
  [
    'exp-client',
    'Client entertainment must be approved by your manager before the event, with the client names and the expected cost per person, which should not exceed 90 euros.',
  ],
  [
    'exp-cards',
    'Corporate cards are issued to staff who travel more than four times a year. A lost card must be reported to the bank and to finance the same day.',
  ],
  [
    'travel-booking',
    'Business travel is booked through the travel desk, not privately. Flights under six hours are economy class; longer flights may be premium economy.',
  ],
  [
    'travel-train',
    'For trips under 600 km the train is the default choice over flying, even if slower, unless the journey would take more than six hours.',
  ],
  [
    'travel-hotel',
    'Hotels are booked up to 150 euros a night in most cities and 220 euros in London, Paris, New York and Zurich. Staying with friends earns a 40 euro gift voucher per night instead.',
  ],
  [
    'travel-insurance',
    'All business trips are covered by the company travel insurance, including medical emergencies abroad; the policy number is on the intranet and on the back of the corporate card.',
  ],
  [
    'travel-mileage',
    'Using your own car for work is reimbursed at 0.36 euros per kilometre; commuting to your usual office is not business travel.',
  ],
  [
    'equip-laptop',
    'Equipment. Everyone receives a laptop on their first day, replaced every four years or when it breaks. Choose a Mac or a ThinkPad; Linux is supported on the ThinkPad only.',
  ],
  [
    'equip-home',
    'For a home office, the company pays up to 400 euros once for a chair, desk or monitor, claimed as an expense with the receipt.',
  ],
  [
    'equip-phone',
    'Company phones are given to on-call engineers and to sales staff. Everyone else may claim 20 euros a month towards their own mobile plan.',
  ],
  [
    'equip-return',
    'When you leave, return your laptop, badge and any company phone on your last day. Equipment that is not returned is deducted from the final salary.',
  ],
  [
    'sec-passwords',
    'Security. Use the company password manager for every work account; passwords are at least 14 characters and never reused. Two-factor authentication is mandatory.',
  ],
  [
    'sec-phishing',
    'Report a suspicious email with the “Report phishing” button, then delete it. Never forward it to colleagues to ask whether it looks real.',
  ],
  [
    'sec-lost-device',
    'A lost or stolen laptop or phone is reported to the IT service desk within one hour, so the device can be wiped remotely. You will not be blamed for reporting.',
  ],
  [
    'sec-visitors',
    'Visitors sign in at reception, wear a visitor badge and are accompanied at all times; they may not use the staff wifi, only the guest network.',
  ],
  [
    'sec-data',
    'Customer data stays in our EU systems: never copy it to a personal device, a USB stick or a personal cloud account, even to work on it at home.',
  ],
  [
    'pay-schedule',
    'Pay. Salaries are paid on the 25th of each month, or the last working day before it when the 25th falls on a weekend or public holiday.',
  ],
  [
    'pay-review',
    'Salaries are reviewed once a year in March, based on the performance review of the previous autumn and on market data; changes apply from April.',
  ],
  [
    'pay-bonus',
    'The annual bonus, when the company meets its targets, is paid with the June salary and is up to 10 percent of base pay.',
  ],
  [
    'pay-pension',
    'The company adds 5 percent of your salary to a pension plan if you contribute at least 3 percent yourself.',
  ],
  [
    'perf-cycle',
    'Performance reviews happen every October: a self-assessment, feedback from two peers of your choice and a conversation with your manager.',
  ],
  [
    'perf-probation',
    'New employees are on probation for 90 days. A review at the end of it confirms the contract; either side may end it during probation with one week’s notice.',
  ],
  [
    'perf-learning',
    'Each employee has a learning budget of 1,000 euros a year for courses, conferences and books, approved by their manager.',
  ],
  [
    'conduct-gifts',
    'Gifts from suppliers or clients worth more than 50 euros must be declared to compliance and usually declined.',
  ],
  [
    'conduct-speakup',
    'Concerns about misconduct can be raised with your manager, HR, or anonymously through the whistleblowing line run by an outside firm.',
  ],
  [
    'office-lisbon',
    'The Lisbon office is open from 7:00 to 21:00 on weekdays. Bicycles can be parked in the basement; showers are on the first floor.',
  ],
  [
    'office-porto',
    'The Porto office opened in 2024 and has 40 desks that are booked in the desk app the day before; there are no fixed desks.',
  ],
  [
    'office-pets',
    'Dogs are welcome in the Porto office on Fridays if they are house-trained and registered with the office manager; not in Lisbon, where the building forbids pets.',
  ],
  [
    'office-lunch',
    'Lunch is catered on Wednesdays in both offices. Tell the office manager about allergies or dietary needs when you join.',
  ],
];

export const handbookQuestions: HandbookQuestion[] = [
  { q: 'How many vacation days do I get each year?', keys: ['leave-annual'], kind: 'single-hop' },
  { q: 'Can I keep holidays I did not use for next year?', keys: ['leave-annual'], kind: 'single-hop' },
  { q: 'I have a cold, when do I need a note from my GP?', keys: ['leave-sick'], kind: 'single-hop' },
  {
    q: 'How much time off does a father get when his baby is born?',
    keys: ['leave-parental'],
    kind: 'single-hop',
  },
  { q: 'My grandmother passed away, can I take some days?', keys: ['leave-bereavement'], kind: 'single-hop' },
  { q: 'Can I take a few months off without salary?', keys: ['leave-unpaid'], kind: 'single-hop' },
  {
    q: 'Can I work from my parents’ place in Brazil for a month?',
    keys: ['hours-remote'],
    kind: 'single-hop',
  },
  { q: 'Do I get paid extra for working on a Saturday?', keys: ['hours-overtime'], kind: 'single-hop' },
  { q: 'Who must approve a claim of 2,000 euros?', keys: ['exp-approval'], kind: 'single-hop' },
  {
    q: 'Can I claim the wine I had with dinner on a business trip?',
    keys: ['exp-meals', 'exp-client'],
    kind: 'multi-hop',
  },
  { q: 'What is the daily food allowance in Madrid?', keys: ['exp-meals'], kind: 'single-hop' },
  { q: 'Can I fly business class to Tokyo?', keys: ['travel-booking'], kind: 'single-hop' },
  { q: 'Should I take a plane from Lisbon to Madrid?', keys: ['travel-train'], kind: 'single-hop' },
  {
    q: 'What is the most I can spend on accommodation in Paris?',
    keys: ['travel-hotel'],
    kind: 'single-hop',
  },
  { q: 'I fell ill on a work trip to Berlin, am I covered?', keys: ['travel-insurance'], kind: 'single-hop' },
  {
    q: 'How much do I get back for driving to a client in my own vehicle?',
    keys: ['travel-mileage'],
    kind: 'single-hop',
  },
  { q: 'Can I run Ubuntu on my work computer?', keys: ['equip-laptop'], kind: 'single-hop' },
  {
    q: 'Will the company buy me an ergonomic seat for working from home?',
    keys: ['equip-home'],
    kind: 'single-hop',
  },
  { q: 'Does the company pay for my mobile bill?', keys: ['equip-phone'], kind: 'single-hop' },
  {
    q: 'I left my notebook computer on the train, what do I do?',
    keys: ['sec-lost-device'],
    kind: 'single-hop',
  },
  {
    q: 'I got a weird email asking for my bank details, should I send it to my team?',
    keys: ['sec-phishing'],
    kind: 'single-hop',
  },
  {
    q: 'Can I put client records on a thumb drive to finish at home?',
    keys: ['sec-data'],
    kind: 'single-hop',
  },
  { q: 'When does my wage arrive if the 25th is a Sunday?', keys: ['pay-schedule'], kind: 'temporal' },
  {
    q: 'When do raises take effect, and what are they based on?',
    keys: ['pay-review', 'perf-cycle'],
    kind: 'multi-hop',
  },
  { q: 'In which month is the yearly bonus paid out?', keys: ['pay-bonus'], kind: 'temporal' },
  { q: 'Does the company match retirement savings?', keys: ['pay-pension'], kind: 'single-hop' },
  {
    q: 'Can I quit with a week’s notice in my first two months?',
    keys: ['perf-probation'],
    kind: 'single-hop',
  },
  { q: 'Is there money for a training course?', keys: ['perf-learning'], kind: 'single-hop' },
  {
    q: 'A vendor sent me a bottle of expensive whisky, can I keep it?',
    keys: ['conduct-gifts'],
    kind: 'single-hop',
  },
  { q: 'Can I bring my puppy to work in Lisbon?', keys: ['office-pets'], kind: 'single-hop' },
  { q: 'How do I reserve a workspace in the northern office?', keys: ['office-porto'], kind: 'single-hop' },
  {
    q: 'Where can I leave my bike and freshen up after cycling in?',
    keys: ['office-lisbon'],
    kind: 'single-hop',
  },
];
